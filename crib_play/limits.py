"""What ``crib serve`` accepts and how much work one request may ask for (issue 27).

Each limit is a module constant with the reason for its size. A request past a limit is refused
with a status and a ``{"detail": reason}`` that names the limit; no error answer repeats more than
``MAX_ECHO`` characters of what the client sent.

- ``BodyLimit``: an ASGI middleware that answers 413 before a body past ``MAX_BODY_BYTES`` is read
  into memory or parsed (from ``Content-Length`` when given, else by counting the chunks).
- ``check_record``: the size of a game record given to ``POST /api/replay`` (target, deals,
  actions, player names), checked before it is replayed.
- ``ExpensivePool``: replays and analyses run on their own few threads, with a bounded queue, so
  that however many of them arrive, moves and reads of other games keep their threads.
- Reviews (``review_jobs.ReviewJobs``): one thread, a bounded queue and a cap per client.
- ``SecurityHeaders``: the Content-Security-Policy and friends sent with every answer.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anyio
from fastapi import HTTPException
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from crib_env.game import DEFAULT_TARGET

# A game record of the longest game there can be is about 250 KB (MAX_RECORD_ACTIONS actions with
# their score events); everything else the page sends is under 1 KB. 1 MiB leaves room for both and
# keeps a hostile body from costing more than a megabyte of memory per request.
MAX_BODY_BYTES = 1 << 20
# Error answers repeat at most this much of a client's text (a bad value is named, not echoed).
MAX_ECHO = 200
MAX_ECHO_ERRORS = 20  # and name at most this many of a body's validation errors
# Replays: the server's own games go to DEFAULT_TARGET, so no record of them is longer. Every
# completed deal pegs at least one point (the last card or a go), so a game to the target has at
# most 2 * target - 1 deals, and a deal is at most 12 decisions (4 discards, 8 plays).
MAX_RECORD_TARGET = DEFAULT_TARGET
MAX_RECORD_DEALS = 2 * MAX_RECORD_TARGET - 1
MAX_RECORD_ACTIONS = 12 * MAX_RECORD_DEALS
MAX_PLAYER_NAME = 200  # names are sent back in the replay's answer
# Expensive requests (replays, analyses): two at a time leave the other core of a small machine
# to the moves; a few more may wait, beyond that the answer is 503.
EXPENSIVE_WORKERS = 2
EXPENSIVE_QUEUE = 16
# Game reviews (``review_jobs``) take seconds to a minute each: one at a time, on a thread of their
# own, so that they never hold the threads of moves or analyses; REVIEW_QUEUE more may wait (503
# past it), at most MAX_REVIEWS_PER_CLIENT of them one player's or one address's (429 past it:
# a client cannot fill the queue by finishing short games or sending records).
REVIEW_WORKERS = 1
REVIEW_QUEUE = 16
MAX_REVIEWS_PER_CLIENT = 3
# Reviews of recorded games sent by a browser are kept in memory for it to fetch, the newest
# REVIEWS_KEPT of them (a review is about 30 KB); a stored game's review is kept with the game.
REVIEWS_KEPT = 64
# Every answer: scripts only from this server's files (no inline script or handler, no eval),
# nothing loaded from elsewhere, no framing.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; "
                           "img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                           "form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {"Content-Security-Policy": CONTENT_SECURITY_POLICY,
                    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def clip(value: Any, limit: int = MAX_ECHO) -> str:
    """``value`` as text of at most ``limit`` characters (longer text is cut and says how long)."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


class BodyLimit:
    """ASGI middleware: a request body past ``limit`` bytes is answered 413 before it is parsed."""

    def __init__(self, app: Any, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(scope, receive, send)
            return
        seen = 0

        async def counted() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:  # a body without Content-Length that kept coming;
                    raise HTTPException(413, self.detail)  # FastAPI passes this one on
            return message

        await self.app(scope, counted, send)

    @property
    def detail(self) -> str:
        return (f"request body larger than {self.limit} bytes (MAX_BODY_BYTES), the most this "
                f"server reads")

    async def _refuse(self, scope: dict, receive: Any, send: Any) -> None:
        response = JSONResponse({"detail": self.detail}, status_code=413, headers=SECURITY_HEADERS)
        await response(scope, receive, send)


def check_record(record: dict[str, Any]) -> None:
    """Refuse (413, naming the limit) a game record longer than any game to the target can be, and
    (400) one whose sizes are not numbers and lists; before any of it is replayed. A key that is
    missing is left to the record reader, whose error lists every missing key."""
    if "target" in record:
        target = record["target"]
        if not isinstance(target, int) or isinstance(target, bool) or target < 1:
            raise HTTPException(400, f"game record: target must be a whole number >= 1, got "
                                     f"{clip(target)}")
        if target > MAX_RECORD_TARGET:
            raise HTTPException(413, f"game record: target {target} is past MAX_RECORD_TARGET "
                                     f"({MAX_RECORD_TARGET}), the longest game this server "
                                     f"replays")
    for key, limit, name in (("deals", MAX_RECORD_DEALS, "MAX_RECORD_DEALS"),
                             ("actions", MAX_RECORD_ACTIONS, "MAX_RECORD_ACTIONS")):
        if key not in record:
            continue
        value = record[key]
        if not isinstance(value, list):
            raise HTTPException(400, f"game record: {key} must be a list, got {clip(value)}")
        if len(value) > limit:
            raise HTTPException(413, f"game record: {len(value)} {key}, past {name} ({limit}, "
                                     f"the most a game to {MAX_RECORD_TARGET} can have)")
    if "players" in record:
        players = record["players"]
        if (not isinstance(players, list) or len(players) != 2
                or not all(isinstance(p, str) for p in players)):
            raise HTTPException(400, f"game record: players must be two names, got "
                                     f"{clip(players)}")
        if any(len(p) > MAX_PLAYER_NAME for p in players):
            raise HTTPException(413, f"game record: a player name is past MAX_PLAYER_NAME "
                                     f"({MAX_PLAYER_NAME} characters)")
    if "scores" in record:
        scores = record["scores"]
        if (not isinstance(scores, list) or len(scores) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in scores)):
            raise HTTPException(400, f"game record: scores must be two whole numbers, got "
                                     f"{clip(scores)}")


class ExpensivePool:
    """At most ``workers`` expensive calls run at once, on threads lent by a limiter of their own
    (not the pool that serves moves); at most ``queue`` more wait, and any beyond get a 503."""

    def __init__(self, workers: int = EXPENSIVE_WORKERS, queue: int = EXPENSIVE_QUEUE) -> None:
        self.workers, self.queue = workers, queue
        self._limiter: anyio.CapacityLimiter | None = None
        self._loop: object = None  # the limiter belongs to one event loop (tests start several)
        self._admitted = 0  # calls running or waiting now (on the event loop's thread only)

    def limiter(self) -> anyio.CapacityLimiter:
        loop = asyncio.get_running_loop()
        if self._limiter is None or self._loop is not loop:
            self._limiter, self._loop = anyio.CapacityLimiter(self.workers), loop
            self._admitted = 0
        return self._limiter

    def load(self) -> tuple[int, int]:
        """(running, waiting) expensive calls now."""
        if self._limiter is None:
            return 0, 0
        stats = self._limiter.statistics()
        return stats.borrowed_tokens, stats.tasks_waiting

    async def run(self, fn: Any, *args: Any) -> Any:
        limiter = self.limiter()
        # Counted here, before any await: the limiter's own statistics see a call only once it
        # waits for a token, so calls arriving together could all pass a check made on them.
        if self._admitted >= self.workers + self.queue:
            running, waiting = self.load()
            raise HTTPException(503, f"busy: {running} replays or analyses running and {waiting} "
                                     f"waiting (EXPENSIVE_WORKERS {self.workers}, EXPENSIVE_QUEUE "
                                     f"{self.queue}); try again shortly")
        self._admitted += 1
        try:
            return await anyio.to_thread.run_sync(fn, *args, limiter=limiter)
        finally:
            self._admitted -= 1


def _bounded(detail: Any) -> Any:
    """A validation error list with every echoed ``input`` (and long message) clipped."""
    if isinstance(detail, list):
        return [_bounded(d) for d in detail]
    if isinstance(detail, dict):
        out = {}
        for key, value in detail.items():
            if key == "input":
                out[key] = clip(value if isinstance(value, str) else json.dumps(value, default=str))
            elif key == "ctx":
                out[key] = {k: clip(v) for k, v in value.items()} if isinstance(value, dict) \
                    else clip(value)
            elif key == "loc":
                out[key] = [p if isinstance(p, int) else clip(p, 60) for p in value]
            else:
                out[key] = _bounded(value)
        return out
    return clip(detail) if isinstance(detail, str) else detail


async def http_error(request: Any, exc: StarletteHTTPException) -> JSONResponse:
    detail = clip(exc.detail, 4 * MAX_ECHO) if isinstance(exc.detail, str) else exc.detail
    return JSONResponse({"detail": detail}, status_code=exc.status_code,
                        headers=getattr(exc, "headers", None))


async def validation_error(request: Any, exc: RequestValidationError) -> JSONResponse:
    errors = list(exc.errors())  # a body's errors, at most MAX_ECHO_ERRORS of them said
    return JSONResponse({"detail": _bounded(errors[:MAX_ECHO_ERRORS])}, status_code=422)


class SecurityHeaders:
    """ASGI middleware: ``SECURITY_HEADERS`` on every answer (the page, its files, the API, errors)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [h for h in self.headers if h[0] not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
