"""The text formats of steps: pure render/parse shared by checks and transports."""
