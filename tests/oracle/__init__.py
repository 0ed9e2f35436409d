"""P9: the oracle scenarios (a scripted model that is right) and their runner."""
