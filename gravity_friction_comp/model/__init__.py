"""Robot model: URDF reading, mimic coupling, RobotModel (Pinocchio), payload, actuator terms."""
