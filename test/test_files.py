"""files.read_text / read_yaml against files that never end (issue 13, point 8)."""

from __future__ import annotations

import os
import time

import pytest

from gravity_friction_comp.errors import ConfigError, ModelError
from gravity_friction_comp.files import (
    MAX_FILE_BYTES,
    MAX_YAML_DEPTH,
    check_regular_file,
    read_text,
    read_yaml,
    yaml_flow_depth,
)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_is_refused_at_once():
    start = time.perf_counter()
    for read in (read_text, read_yaml):
        with pytest.raises(ConfigError, match="not a regular file") as info:
            read("/dev/zero", "arm_config")
        assert info.value.key == "arm_config" and info.value.value == "/dev/zero"
    assert time.perf_counter() - start < 1.0


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it would block until a writer comes
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="not a regular file"):
        read_yaml(fifo, "sim_config")
    assert time.perf_counter() - start < 1.0


def test_files_above_the_size_limit_are_refused(tmp_path):
    assert MAX_FILE_BYTES == 16 * 1024 * 1024
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:  # sparse: no 16 MiB written
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(ConfigError, match="byte limit"):
        read_text(big, "bam_files")
    small = tmp_path / "small.yaml"
    small.write_text("a: 1\n")
    assert check_regular_file(small, "x") == 5
    with pytest.raises(ConfigError, match="byte limit"):
        read_text(small, "x", max_bytes=4)
    assert read_yaml(small, "x") == {"a": 1}


def test_newlines_are_universal_as_before(tmp_path):
    path = tmp_path / "crlf.csv"
    path.write_bytes(b"t,q\r\n0,1\r\n")
    assert read_text(path, "CSV log") == "t,q\n0,1\n"


@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_deeply_nested_yaml_is_refused_fast(tmp_path, opening):
    closing = "]" if opening == "[" else "}"
    path = tmp_path / "deep.yaml"
    path.write_text(opening * 20_000 + "1" + closing * 20_000)
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="nested 20000 levels deep") as info:
        read_yaml(path, "arm_config")
    assert info.value.key == "arm_config"
    assert time.perf_counter() - start < 1.0
    # the limit is far above real files
    ok = tmp_path / "ok.yaml"
    ok.write_text("a: " + "[" * MAX_YAML_DEPTH + "1" + "]" * MAX_YAML_DEPTH + "\n")
    assert read_yaml(ok, "arm_config")["a"] is not None


def test_flow_depth_bound():
    assert yaml_flow_depth("a: 1\nb: [1, 2]\n") == 1
    assert yaml_flow_depth("a: {b: [1, {c: 2}]}") == 3
    assert yaml_flow_depth("]]] [[") == 2  # stray closers do not hide later openings
    assert yaml_flow_depth("") == 0


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_urdf_path_dev_zero_and_huge_urdf_are_refused(tmp_path):
    from gravity_friction_comp.model.urdf import read_source

    with pytest.raises(ModelError):
        read_source("/dev/zero")
    big = tmp_path / "big.urdf"
    with big.open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(ModelError, match="byte limit"):
        read_source(str(big))


@pytest.mark.parametrize("name", ["x" * 5000, "a\x00b"])
def test_impossible_path_names_are_errors_not_oserrors(name):
    # a name too long for the file system (an OSError from pathlib's is_dir/is_file) or with
    # a NUL byte (ValueError from stat) was a traceback from these readers
    from gravity_friction_comp.errors import IdentificationError
    from gravity_friction_comp.ident.joint_log import load_log
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    with pytest.raises(ConfigError, match="cannot read") as info:
        read_yaml(name, "arm_config")
    assert info.value.key == "arm_config"
    with pytest.raises(IdentificationError, match="does not exist"):
        load_log(name)
    with pytest.raises(ConfigError, match="unknown arm"):
        load_arm(name)
