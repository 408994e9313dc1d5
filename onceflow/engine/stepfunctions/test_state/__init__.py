"""The TestState API: one state tested alone, with mocks and Retry/Catch outcomes."""
