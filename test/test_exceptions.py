from gravity_friction_comp import ConfigError, DimensionError, GravityFrictionCompError


def test_dimension_error_names_lengths():
    err = DimensionError("breakaway", 6, 5)
    assert isinstance(err, ConfigError) and isinstance(err, GravityFrictionCompError)
    assert isinstance(err, ValueError)
    assert "6" in str(err) and "5" in str(err) and "breakaway" in str(err)
    assert (err.expected, err.actual, err.key) == (6, 5, "breakaway")
