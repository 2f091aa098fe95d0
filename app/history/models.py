"""The durable record of game nights (SQLAlchemy 2, typed ``Mapped[]``).

A match is a run of rounds in one room until someone reaches the target score. Each round keeps
its seats (name, bot level, final cards, score after the round) and its record (seed + rules +
actions, compact JSON) from which ``engine.replay`` rebuilds it. Rows are written only after a
round has ended, so nothing here is hidden information while it matters; tokens never are.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class Match(Base):
    __tablename__ = "matches"
    __table_args__ = (UniqueConstraint("room_code", "number", name="uq_match_room_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    room_code: Mapped[str] = mapped_column(String(6), index=True)
    number: Mapped[int] = mapped_column(Integer)  # the room's match counter
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    started_ms: Mapped[int] = mapped_column(BigInteger)
    ended_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    winner: Mapped[str | None] = mapped_column(String(16), nullable=True)
    winner_name: Mapped[str | None] = mapped_column(String(24), nullable=True)

    rounds: Mapped[list[Round]] = relationship(back_populates="match", order_by="Round.number")


class Round(Base):
    __tablename__ = "rounds"
    __table_args__ = (UniqueConstraint("uid", name="uq_round_uid"),
                      UniqueConstraint("public_id", name="uq_round_public_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)  # never on the wire
    uid: Mapped[str] = mapped_column(String(64))  # room code + round number + start: idempotent writes
    # the round's id on the wire: random (app.history.writer.new_public_id), so rounds cannot
    # be walked; ids are not credentials, the routes still ask for one (app/api/history.py)
    public_id: Mapped[str] = mapped_column(String(32))
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    room_code: Mapped[str] = mapped_column(String(6), index=True)
    number: Mapped[int] = mapped_column(Integer)
    seed: Mapped[str] = mapped_column(String(64))
    dealer: Mapped[str] = mapped_column(String(16))
    winner: Mapped[str | None] = mapped_column(String(16), nullable=True)
    reason: Mapped[str | None] = mapped_column(String(16), nullable=True)
    points: Mapped[int] = mapped_column(Integer, default=0)
    eliminations: Mapped[int] = mapped_column(Integer, default=0)
    started_ms: Mapped[int] = mapped_column(BigInteger)
    ended_ms: Mapped[int] = mapped_column(BigInteger)
    duration_ms: Mapped[int] = mapped_column(BigInteger)
    action_count: Mapped[int] = mapped_column(Integer)
    match_over: Mapped[bool] = mapped_column(Boolean, default=False)
    # dealt from a finished round another room shared (its public id; app/rooms/deals.py)
    deal_of: Mapped[str | None] = mapped_column(String(32), nullable=True)

    match: Mapped[Match] = relationship(back_populates="rounds")
    seats: Mapped[list[RoundSeat]] = relationship(back_populates="round", order_by="RoundSeat.seat",
                                                  cascade="all, delete-orphan")
    record: Mapped[RoundRecord] = relationship(back_populates="round", cascade="all, delete-orphan")


class RoundSeat(Base):
    __tablename__ = "round_seats"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id", ondelete="CASCADE"), index=True)
    seat: Mapped[int] = mapped_column(Integer)
    player_id: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(24))
    bot_level: Mapped[str | None] = mapped_column(String(8), nullable=True)
    final_cards: Mapped[int] = mapped_column(Integer)
    eliminated: Mapped[bool] = mapped_column(Boolean, default=False)
    score_after: Mapped[int] = mapped_column(Integer)

    round: Mapped[Round] = relationship(back_populates="seats")


class HistoryShare(Base):
    """A night's record shared on purpose by its host: whoever has ``share_id`` reads the
    rounds of ``room_code`` that started from ``since_ms`` on (the room's creation, so rounds of
    an earlier room that had the same code are left out), without the room's code."""

    __tablename__ = "history_shares"
    __table_args__ = (UniqueConstraint("share_id", name="uq_history_share_id"),
                      UniqueConstraint("room_code", "since_ms", name="uq_history_share_room"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    share_id: Mapped[str] = mapped_column(String(32))
    room_code: Mapped[str] = mapped_column(String(6))
    since_ms: Mapped[int] = mapped_column(BigInteger)
    created_ms: Mapped[int] = mapped_column(BigInteger)


class RoundRecord(Base):
    __tablename__ = "round_records"

    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id", ondelete="CASCADE"), primary_key=True)
    record: Mapped[str] = mapped_column(Text)  # engine Record.to_dict(), compact JSON

    round: Mapped[Round] = relationship(back_populates="record")
