"""Automations (DESIGN §9): flows — a trigger and steps run in order — and the executor core that runs them.

The core: the flow model (`Flow`, its triggers and steps), flow files, variables, the condition language and
`run_flow`. In the server: `AutomationService` (saved flows, persisted runs, approvals, recovery, the cron loop;
`_engine` runs and records one run, `_schedule` plans cron fires and catch-up), `LiveTriggers` (files, session
events, MCP notifications), flow tools and `proposeAutomation` (`_tools`), `CoreHost` (what steps need of the core).
See docs/automations.md.

Variables. A step's templated fields (`arguments`, `prompt`, `title`, `body`) may hold `${root.path}` references.
The roots are:

- `input`: the run's inputs, checked against `Flow.inputs` and with defaults filled in (`${input.ticket}`);
- `trigger`: what fired the run, as the trigger gives it (`${trigger.path}` for a file event, say); `{}` for a manual
  run;
- each step's output variable (`output`, by default the step's id): `${fetch.items[0].title}`.

An exact reference keeps its value's type, references in longer text become text (JSON for non-strings),
unresolved ones stay as written, `$${` writes a literal `${`, and values are never expanded again
(`_variables`). A reference to the step's own or a later step's output is refused when the flow is validated.

Conditions. A `condition` step evaluates `when` (`_expressions`: comparisons, `and`/`or`/`not`, `contains`,
literals, references; no Python). True: the flow goes on. False: the next `skip` steps (default 1) are skipped;
skipping to the end ends the flow, `done`. Its output is the boolean.

Results. A step with `directOutput` ends the run `done` with its output as the result; a run that reaches the end
returns the last toolCall/mcpToolCall/agentStep/notification output. The first failing step ends the run `failed`.
"""

from ._engine import RunEngine
from ._executor import (
    RunContext,
    RunRecorder,
    RunResult,
    RunStatus,
    StepError,
    StepFailed,
    StepParked,
    StepRunner,
    resolve_step,
    run_flow,
    variables_of,
)
from ._expressions import Expression, ExpressionError, parse_expression
from ._files import FlowFileError, dump_flow, load_flow, parse_flow, read_flow, write_flow
from ._host import CoreHost, StepHost
from ._model import MAX_STEPS, Flow, FlowInput, FlowInputError
from ._runs import RUNS, Runs, RunState
from ._schedule import Fire, FirePlan, plan_fires
from ._service import AutomationService, parse_definition
from ._steps import (
    MAX_DELAY_SECONDS,
    AgentStep,
    ConditionStep,
    DelayStep,
    McpToolCallStep,
    NotificationStep,
    Step,
    ToolCallStep,
)
from ._tools import FlowTool, ProposeAutomationTool, flow_tool_name
from ._triggers import (
    CronTrigger,
    FileTrigger,
    ManualTrigger,
    McpNotificationTrigger,
    SessionEventTrigger,
    Trigger,
)
from ._triggers_live import LiveTriggers
from ._variables import MISSING, Reference, find_references, parse_reference, render, resolve, substitute

__all__ = [
    "MAX_DELAY_SECONDS",
    "MAX_STEPS",
    "MISSING",
    "RUNS",
    "AgentStep",
    "AutomationService",
    "ConditionStep",
    "CoreHost",
    "CronTrigger",
    "DelayStep",
    "Expression",
    "ExpressionError",
    "FileTrigger",
    "Fire",
    "FirePlan",
    "Flow",
    "FlowFileError",
    "FlowInput",
    "FlowInputError",
    "FlowTool",
    "LiveTriggers",
    "ManualTrigger",
    "McpNotificationTrigger",
    "McpToolCallStep",
    "NotificationStep",
    "ProposeAutomationTool",
    "Reference",
    "RunContext",
    "RunEngine",
    "RunRecorder",
    "RunResult",
    "RunState",
    "RunStatus",
    "Runs",
    "SessionEventTrigger",
    "Step",
    "StepError",
    "StepFailed",
    "StepHost",
    "StepParked",
    "StepRunner",
    "ToolCallStep",
    "Trigger",
    "dump_flow",
    "find_references",
    "flow_tool_name",
    "load_flow",
    "parse_definition",
    "parse_expression",
    "parse_flow",
    "parse_reference",
    "plan_fires",
    "read_flow",
    "render",
    "resolve",
    "resolve_step",
    "run_flow",
    "substitute",
    "variables_of",
    "write_flow",
]
