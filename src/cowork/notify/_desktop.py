"""Desktop notifications through the freedesktop notification interface (`org.freedesktop.Notifications` on D-Bus).

Where the desktop offers it (GNOME, KDE, XFCE, dunst, mako, ...), a delivery is also shown as a desktop notification.
That is best-effort: the delivery has already reached the clients, and a desktop without a notification server, a bus
that went away or a server that refuses costs only the extra notification. So nothing here raises: `available` says
why not in plain words, and `send` logs at debug and answers None.

D-Bus is spoken with jeepney (pure Python, asyncio), imported inside the methods so that importing `cowork.notify`
stays cheap and works where jeepney is absent (it is declared for Linux only). Only Linux is built; macOS and Windows
have other notification APIs.

Titles and bodies come from untrusted sources (web pages, mail, MCP servers), and what the user must see is the text
that was sent, not markup someone smuggled into it. The specification makes the summary plain text, and servers treat
it so (dunst escapes it itself: escaping it here would show `&lt;`). The body may carry a markup subset on a server
that lists the `body-markup` capability, so there `&<>` are escaped; a server without it shows the body as it is, and
escaping would show the entities (both observed with dunst in tests/notify/test_desktop.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING, Any

from ._tiers import Tier

if TYPE_CHECKING:
    from jeepney import Message
    from jeepney.io.asyncio import DBusConnection, DBusRouter

__all__ = ["DesktopNotifier"]

log = logging.getLogger(__name__)

NAME = "org.freedesktop.Notifications"
_PATH = "/org/freedesktop/Notifications"

# The specification's urgency levels: 0 low, 1 normal, 2 critical (servers keep critical ones up until dismissed).
URGENCY: dict[Tier, int] = {"urgent": 2, "helpful": 1, "informational": 0}

TITLE_LIMIT = 200
BODY_LIMIT = 1000

_NO_JEEPNEY = "desktop notifications are built for Linux only (they need the jeepney package, installed there)"

_TIMEOUT = 5.0
"""Seconds to wait for the bus or the server: a hung server must not hold a delivery up."""


class _Unavailable(Exception):
    """Why a call could not be made, in the words `available` gives."""


class _Dropped(_Unavailable):
    """The connection to the bus went away during a call."""


class DesktopNotifier:
    """Shows deliveries as desktop notifications through the session bus's notification server (best-effort).

    Connects on first use, keeps the connection, and connects again once when it finds it dropped.

    Args:
        address: The session bus address (`unix:path=...`); None means `$DBUS_SESSION_BUS_ADDRESS`.
    """

    def __init__(self, address: str | None = None) -> None:
        self._address = address if address is not None else os.environ.get("DBUS_SESSION_BUS_ADDRESS")
        self._conn: DBusConnection | None = None
        self._router: DBusRouter | None = None
        self._lock = asyncio.Lock()

    async def available(self) -> str | None:
        """Whether a notification would be shown, checked on the bus; never raises.

        Returns:
            None when a notification server owns its name on the session bus, or the bus can start one on demand;
            otherwise why not, in plain words ("no D-Bus session bus ...", "no notification daemon is running ...").
        """
        try:
            from jeepney.bus_messages import message_bus
        except ImportError:
            return _NO_JEEPNEY
        try:
            if (await self._call(message_bus.NameHasOwner(NAME))).body == (True,):
                return None
            # A server the bus starts on demand (dunst ships such a service file) counts: the first Notify starts it.
            if NAME in (await self._call(message_bus.ListActivatableNames())).body[0]:
                return None
        except _Unavailable as exc:
            return str(exc)
        return f"no notification daemon is running on the session bus (nothing owns {NAME})"

    async def send(
        self,
        *,
        title: str,
        body: str,
        tier: Tier,
        app_name: str = "Cowork",
        replaces_id: int = 0,
        timeout_ms: int = -1,
    ) -> int | None:
        """Show a notification; never raises.

        Args:
            title: Plain text, clipped to 200 characters.
            body: Plain text, clipped to 1000 characters (escaped where the server reads markup in it).
            tier: "urgent", "helpful" or "informational", sent as the urgency hint critical, normal or low.
            app_name: The application name the server shows and groups by.
            replaces_id: A notification id this one updates in place; 0 for a new one.
            timeout_ms: How long the server shows it; -1 leaves it to the server, 0 keeps it until dismissed.

        Returns:
            The server's id for the notification, or None when there is no server or it failed (logged at debug).
        """
        urgency = URGENCY.get(tier)
        if urgency is None or not 0 <= replaces_id < 2**32 or not -(2**31) <= timeout_ms < 2**31:
            log.debug(
                "desktop notification not sent: tier %r, replaces_id %r or timeout_ms %r out of range",
                tier,
                replaces_id,
                timeout_ms,
            )
            return None
        try:
            capabilities = (await self._notifications("GetCapabilities")).body
            markup = bool(capabilities) and "body-markup" in capabilities[0]
            text = _text(body, BODY_LIMIT)
            reply = await self._notifications(
                "Notify",
                "susssasa{sv}i",
                (
                    _text(app_name, TITLE_LIMIT),
                    replaces_id,
                    "",  # no icon: the server shows the application's
                    _text(title, TITLE_LIMIT),
                    _escape(text) if markup else text,
                    [],  # no actions: the user answers through the clients
                    {"urgency": ("y", urgency)},
                    timeout_ms,
                ),
            )
        except _Unavailable as exc:
            log.debug("desktop notification not sent: %s", exc)
            return None
        if len(reply.body) != 1 or not isinstance(reply.body[0], int):
            log.debug("desktop notification: the server answered Notify with %r, not an id", reply.body)
            return None
        return reply.body[0]

    async def close(self) -> None:
        """Drop the connection (a later call connects again)."""
        async with self._lock:
            await self._drop()

    async def _notifications(self, method: str, signature: str | None = None, body: tuple[Any, ...] = ()) -> Message:
        try:
            from jeepney import DBusAddress, new_method_call
        except ImportError:
            raise _Unavailable(_NO_JEEPNEY) from None

        server = DBusAddress(_PATH, bus_name=NAME, interface=NAME)
        return await self._call(new_method_call(server, method, signature, body))

    async def _call(self, message: Message) -> Message:
        """The reply to `message`, over the kept connection, or over a fresh one if that one dropped during the call.

        Raises:
            _Unavailable: No bus, no answer, or an error reply, with the reason.
        """
        try:
            return await self._call_once(message)
        except _Dropped:
            # The bus went away (restarted, or the session ended). Asking again cannot show a notification twice: the
            # server the first call reached, if any, was on the bus that went away and lost its connection with it.
            return await self._call_once(message)

    async def _call_once(self, message: Message) -> Message:
        from jeepney import HeaderFields, MessageType
        from jeepney.io.common import RouterClosed

        router = await self._connect()
        try:
            async with asyncio.timeout(_TIMEOUT):
                reply = await router.send_and_get_reply(message)
        except TimeoutError:
            raise _Unavailable(f"the notification server did not answer within {_TIMEOUT:g} s") from None
        except (RouterClosed, EOFError, OSError) as exc:
            async with self._lock:
                if self._router is router:
                    await self._drop()
            raise _Dropped(f"lost the connection to the D-Bus session bus ({exc or type(exc).__name__})") from exc
        if reply.header.message_type is MessageType.error:
            name = reply.header.fields.get(HeaderFields.error_name, "an error")
            detail = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
            raise _Unavailable(f"the bus answered {name}" + (f": {detail}" if detail else ""))
        return reply

    async def _connect(self) -> DBusRouter:
        async with self._lock:
            # A connection the bus has closed (the router's receiver read its end) would only fail: start afresh.
            if self._router is not None and self._conn is not None and not self._conn.reader.at_eof():
                return self._router
            await self._drop()
            self._conn, self._router = await _open(self._address)
            return self._router

    async def _drop(self) -> None:
        router, conn, self._router, self._conn = self._router, self._conn, None, None
        if router is not None:
            try:
                # Stops its receiver, re-raising what ended it (EOFError when the bus closed the socket).
                await router.__aexit__(None, None, None)
            except Exception as exc:
                log.debug("the D-Bus connection had ended: %r", exc)
        if conn is not None:
            try:
                await conn.close()
            except OSError as exc:
                log.debug("closing the D-Bus connection: %s", exc)


async def _open(address: str | None) -> tuple[DBusConnection, DBusRouter]:
    """A connection to the bus at `address`, and a router that matches replies to calls on it.

    Raises:
        _Unavailable: jeepney is missing, there is no address, or the bus cannot be reached.
    """
    try:
        from jeepney.bus import get_bus
        from jeepney.io.asyncio import DBusRouter, open_dbus_connection
        from jeepney.wrappers import DBusErrorResponse
    except ImportError:
        raise _Unavailable(_NO_JEEPNEY) from None
    if not address:
        raise _Unavailable("no D-Bus session bus ($DBUS_SESSION_BUS_ADDRESS is not set)")
    try:
        get_bus(address)
    except (RuntimeError, ValueError):
        raise _Unavailable(f"the D-Bus session bus address {address!r} names no Unix socket to connect to") from None
    try:
        async with asyncio.timeout(_TIMEOUT):
            conn = await open_dbus_connection(address)
    except TimeoutError:
        raise _Unavailable(f"the D-Bus session bus at {address} did not answer within {_TIMEOUT:g} s") from None
    except OSError as exc:
        raise _Unavailable(f"cannot connect to the D-Bus session bus at {address}: {exc.strerror or exc}") from None
    except (EOFError, ValueError, DBusErrorResponse) as exc:
        # EOFError: the bus closed the socket; ValueError: jeepney's AuthenticationError; an error reply to Hello.
        raise _Unavailable(f"the D-Bus session bus at {address} refused the connection ({exc!r})") from None
    return conn, DBusRouter(conn)


def _text(text: str, limit: int) -> str:
    """`text` as a D-Bus string can carry it (no NUL, valid UTF-8), clipped to `limit` characters.

    A NUL or a lone surrogate would make the message invalid, and the bus disconnects a client that sends one.
    """
    text = text.replace("\0", "").encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _escape(text: str) -> str:
    """`text` as markup that shows it as it is (the specification's markup is XML: `&`, `<` and `>` need entities)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
