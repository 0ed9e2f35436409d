"""What the small profile changes in a turn, each rule with its measurement."""
