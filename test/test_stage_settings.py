"""StageSettings (stage/settings.py): one scale or one per joint, validated in one place.

Expected values are written out by hand; the existing scalar cases stay in test_stage.py.
"""

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.stage.settings import StageSettings


def test_per_joint_settings_accept_sequences_of_numbers():
    import array

    from gravity_friction_comp.errors import DimensionError
    from gravity_friction_comp.stage.contract import MAX_SCALE

    for given in ([1, 1.1, -MAX_SCALE], (1, 1.1, -MAX_SCALE), array.array("d", [1, 1.1, -MAX_SCALE])):
        settings = StageSettings(scale=given)
        assert settings.per_joint and settings.scale.dtype == float
        assert settings.scale.tolist() == [1.0, 1.1, -100.0]
        with pytest.raises(ValueError):
            settings.scale[0] = 2.0  # read-only: a frozen setting
        assert settings.scale_for(3) is settings.scale
        with pytest.raises(DimensionError, match="scale: expected 4 values") as info:
            settings.scale_for(4)
        assert info.value.key == "scale"
    one = StageSettings(scale=[2])  # one element: every joint, as effort_limit
    assert not one.per_joint and one.scale == 2.0 and type(one.scale) is float
    assert one.scale_for(5) == 2.0
    assert StageSettings(scale=[1.0, 2.0]) == StageSettings(scale=np.array([1.0, 2.0]))
    assert StageSettings(scale=[1.0, 2.0]) != StageSettings(scale=[1.0, 2.5])
    assert StageSettings(scale=1.0) == StageSettings() and StageSettings(scale=[1.0, 1.0]) != StageSettings()
    assert hash(StageSettings(scale=(1.0, 2.0))) == hash(StageSettings(scale=[1.0, 2.0]))


@pytest.mark.parametrize(
    "scale,needle",
    [
        ([1.0, math.nan], "scale[1] must be finite"),
        ([math.inf, 1.0], "scale[0] must be finite"),
        ([1.0, 100.5], "scale[1] must be within [-100, 100]"),
        ([1.0, True], "scale[1] must be a number"),
        (["1", 1.0], "scale[0] must be a number"),
        ([[1.0], [2.0]], "scale[0] must be a number"),
        ([], "empty"),
        (np.ones((2, 2)), "scale must be a number"),
    ],
)
def test_per_joint_settings_refuse_bad_elements(scale, needle):
    with pytest.raises(ConfigError) as info:
        StageSettings(scale=scale)
    assert info.value.key == "scale" and needle in str(info.value)
