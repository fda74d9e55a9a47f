"""Bot folders: their manifests (bot.toml) and the processes the arena launches from them."""
