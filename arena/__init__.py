"""ONO 99 Arena: a referee, tournaments and ratings for bots that play ONO 99."""

__version__ = "0.1.0"
