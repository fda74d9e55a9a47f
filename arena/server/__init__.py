"""`arena serve`: a running arena: bots from anywhere, tournaments on demand, a ladder."""
