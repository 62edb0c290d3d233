"""Accounting around one model call: `admit` refuses before a cap would be crossed, `charge` records and warns."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic_ai.usage import RequestUsage

from cowork.config import BudgetsConfig, CoworkConfig, PriceOverride
from cowork.protocol import BudgetWarning, Usage
from cowork.store import Database, OperationRow, SessionRow, repos
from cowork.usage import ModelCall, Spend, UsageService, admit, charge

pytestmark = pytest.mark.anyio
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
PRICES = {"mock:m": PriceOverride(input_per_mtok=1000.0, output_per_mtok=2000.0)}
"""$0.001 an input token, $0.002 an output token: round numbers for the assertions."""
CALL = ModelCall("s1", "op1", "op1", 3, "mock", "m")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.sqlite(tmp_path / "cowork.db")
    database.migrate()
    database.write_sync(lambda c: repos.sessions.insert(c, SessionRow("s1", "t", "/w", None, None, NOW, NOW)))
    database.write_sync(
        lambda c: repos.operations.insert(c, OperationRow("op1", "s1", None, "chat", "running", "mock", "m", NOW, NOW))
    )
    yield database
    database.close()


def service(db: Database, *, per_request: float | None = 1.0) -> UsageService:
    config = CoworkConfig(
        budgets=BudgetsConfig(per_interaction_usd=per_request, estimated_output_tokens=100), prices=PRICES
    )
    return UsageService(db, config)


def test_admit_refuses_a_call_that_would_cross_a_cap_unless_allowed(db: Database) -> None:
    usage = service(db)
    spent = Spend({"interaction": 0.5})
    # 100 input + 100 output tokens ≈ $0.30: fits under $1 after $0.50, not after $0.80.
    assert admit(usage, spent, provider="mock", model="m", input_tokens=100, allowed=frozenset()) is None
    refusal = admit(
        usage, Spend({"interaction": 0.8}), provider="mock", model="m", input_tokens=100, allowed=frozenset()
    )
    assert refusal is not None and refusal.cap == "interaction" and refusal.limit_usd == 1.0
    allowed = frozenset({"interaction"})
    assert (
        admit(usage, Spend({"interaction": 0.8}), provider="mock", model="m", input_tokens=100, allowed=allowed) is None
    )


def test_charge_prices_the_call_records_it_and_warns_once_a_share_is_crossed(db: Database) -> None:
    usage = service(db)
    bill = charge(
        usage, CALL, RequestUsage(input_tokens=200, output_tokens=100), Spend({"interaction": 0.5}), NOW, prices=PRICES
    )
    assert bill.cost_usd == pytest.approx(0.4)
    assert bill.events == [
        Usage(
            operation_id="op1",
            step=3,
            provider="mock",
            model="m",
            input_tokens=200,
            output_tokens=100,
            cost_usd=bill.cost_usd,
            interaction_cost_usd=0.9,
            day_cost_usd=0.4,
        ),
        BudgetWarning(operation_id="op1", cap="interaction", limit_usd=1.0, spent_usd=0.9, fraction=0.9),
    ]
    db.write_sync(bill.mutate)
    op = db.read_sync(lambda c: repos.operations.get(c, "op1"))
    assert op is not None and (op.input_tokens, op.output_tokens, op.step_count) == (200, 100, 3)
    assert op.cost_usd == pytest.approx(0.4)
    assert db.read_sync(lambda c: repos.usage.totals(c, session_id="s1")).calls == 1


def test_charge_warns_nothing_below_the_share(db: Database) -> None:
    bill = charge(service(db), CALL, RequestUsage(input_tokens=10, output_tokens=10), Spend(), NOW, prices=PRICES)
    assert [type(e) for e in bill.events] == [Usage]
