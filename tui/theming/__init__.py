"""Themes as data files and the app's remembered choices."""
