"""ament_python build for gravity_friction_comp (works with colcon on a ROS install or in pip)."""

import os
from glob import glob

from setuptools import find_packages, setup

from gravity_friction_comp.version import package_xml_version

PACKAGE = "gravity_friction_comp"

setup(
    name=PACKAGE,
    version=package_xml_version("package.xml"),  # the one place of the version
    packages=find_packages(exclude=["test", "test.*", "bench"]),
    package_data={PACKAGE: ["py.typed"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/launch", glob("launch/*.py")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*.urdf") + glob("urdf/*.xacro")),
        (f"share/{PACKAGE}/arms", ["arms/README.md"]),
        *(
            (f"share/{PACKAGE}/{d}", glob(f"{d}/*"))
            for d in sorted(os.path.dirname(p) for p in glob("arms/*/profile.yaml"))
        ),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="gravity_friction_comp maintainers",
    maintainer_email="maintainers@gravity-friction-comp.invalid",
    description="Gravity and friction feedforward for MIT-mode CAN robot arms.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            f"gravity_compensation_node = {PACKAGE}.nodes.gravity_compensation_node:main",
            f"friction_feedforward_node = {PACKAGE}.nodes.friction_feedforward_node:main",
            f"mit_bridge_node = {PACKAGE}.nodes.mit_bridge_node:main",
            f"composed_chain = {PACKAGE}.nodes.composed_chain:main",
            f"composed_free_drive = {PACKAGE}.nodes.composed_free_drive:main",
            f"setpoint_player = {PACKAGE}.nodes.setpoint_player:main",
            f"setpoint_shaper = {PACKAGE}.nodes.setpoint_shaper_node:main",
            f"free_drive_node = {PACKAGE}.nodes.free_drive_node:main",
            f"teleop_node = {PACKAGE}.nodes.teleop_node:main",
            f"composed_teleop = {PACKAGE}.nodes.composed_teleop:main",
            f"momentum_observer = {PACKAGE}.nodes.observer_node:main",
            f"gfc_demo = {PACKAGE}.tools.demo:main",
            f"identify_friction = {PACKAGE}.tools.identify_friction:main",
            f"excite = {PACKAGE}.tools.excite:main",
            f"record = {PACKAGE}.tools.record:main",
            f"calibrate_gravity = {PACKAGE}.tools.calibrate_gravity:main",
            f"sim_arm = {PACKAGE}.tools.sim_arm:main",
        ],
    },
)
