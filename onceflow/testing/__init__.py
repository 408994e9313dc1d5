"""Onceflow for a team's own tests: the pytest plugin and the pipeline driver (public API).

Installed with `pip install "onceflow[local]"`, the plugin (`onceflow.testing.plugin`, loaded by
pytest through the `pytest11` entry point) gives every test run these fixtures:

- `onceflow_aws`: the embedded AWS (moto and Onceflow's patches), one per session;
- `onceflow_template`: the app's template.yaml (the rootdir's, `--onceflow-template` or the ini
  option `onceflow_template`);
- `onceflow_parameters`: the template parameters a test deploys with (`@pytest.mark.onceflow_parameters(...)`,
  or override the fixture), checked against the template;
- `onceflow_stack`: the app's stack deployed from its template, as just deployed for every test;
- `onceflow_pipeline`: the whole pipeline on that stack (event source, starter, state machine,
  safety net, reconciler, subscribers);
- `onceflow_driver`: a `PipelineDriver`: send, process, settle, and the R1–R5 verdicts.

Importing this package imports nothing heavy: `PipelineDriver` and `GuaranteeFailed` are loaded
when first used, so pytest starts as fast with the plugin as without.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from onceflow.testing.driver import GuaranteeFailed, PipelineDriver

__all__ = ["GuaranteeFailed", "PipelineDriver"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from onceflow.testing import driver

        return getattr(driver, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
