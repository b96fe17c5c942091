"""chainrule's tests, one folder per area of the package."""
