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
    __table_args__ = (UniqueConstraint("uid", name="uq_round_uid"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uid: Mapped[str] = mapped_column(String(64))  # room code + round number + start: idempotent writes
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


class RoundRecord(Base):
    __tablename__ = "round_records"

    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id", ondelete="CASCADE"), primary_key=True)
    record: Mapped[str] = mapped_column(Text)  # engine Record.to_dict(), compact JSON

    round: Mapped[Round] = relationship(back_populates="record")
