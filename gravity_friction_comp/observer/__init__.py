"""External joint torque from the model: the generalized momentum observer, contact detection."""
