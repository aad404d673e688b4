"""Alert rules and the engine that evaluates them."""
