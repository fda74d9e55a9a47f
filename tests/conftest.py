"""Settings for every test."""

import os

# The arena passes a bot none of its own environment but the variables named here: the
# mark tests find leftover processes by, and the rogue bot's settings.
os.environ["ONO99_BOT_ENV"] = "ARENA_TEST_MARK,ROGUE_SLEEP"
