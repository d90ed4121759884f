"""Scene file formats (pure Python): each converts between its files and the scene model."""
