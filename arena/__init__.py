"""ONO 99 Arena: a referee, tournaments and ratings for bots that play ONO 99."""

import ono99  # noqa: F401  (chooses gRPC's transport before gRPC is imported; see ono99/__init__.py)

__version__ = "0.1.0"
