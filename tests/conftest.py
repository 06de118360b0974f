"""Settings for every test module.

Property tests draw the same examples on every run, so that a run (in CI
too) fails or passes by the code, not by the draw; nothing is kept between
runs. ``HYPOTHESIS_PROFILE=explore`` draws new random examples instead, to
look for failures.
"""

import os

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
