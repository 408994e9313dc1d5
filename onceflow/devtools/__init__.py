"""Test and developer tools: the trace page, fault schedules, external endpoints, static checks."""
