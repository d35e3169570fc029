"""How tools reach the model and its calls come back: the native and text protocols."""
