"""mnemo."""
