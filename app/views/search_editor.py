"""The search-state view's tiling editor: another tiling of one required format of the shown
operation, with the drag bands and numeric inputs of ``app.widgets.tiling_widget.TilingWidget``.
Shard bytes follow live; an invalid count is refused with the rule it breaks
(``planner.tiling_rules``, the rules the profile editor uses), shown at its handle. The edits are
explorations kept per view (per session): they change neither the file nor the plan.
"""

from __future__ import annotations

import math

import panel as pn

from tilescope.app.format import esc
from tilescope.app.widgets.count_inputs import CountInputs
from tilescope.app.widgets.tiling_widget import TilingWidget, committed_count
from tilescope.derived.search_rows import FormatPair, format_figures, refusal_text
from tilescope.derived.values import tiling_summary
from tilescope.models.format import fmt_bytes, fmt_signed_bytes
from tilescope.models.tiling import TensorTiling
from tilescope.planner import tiling_rules
from tilescope.planner.shards import ShapeMismatch, shard_bytes


class SearchTilingEditor:
    """The editor half of ``SearchStateView`` (a mixin: its widgets and ``commit``/``tiling_of``
    are the view's, as the tests drive them). The view sets ``pairs`` (the shown operation's
    formats), ``tile_limit`` and ``operation_id``."""

    pairs: list[FormatPair]
    tile_limit: int

    @property
    def operation_id(self) -> int:
        raise NotImplementedError  # the view's picker

    def _build_editor(self, html: dict) -> list:
        """The editor's widgets; returns the rows the view lays out."""
        self._edits: dict[tuple[int, str], TensorTiling] = {}  # (operation, target key) → edited required tiling
        self.edit_target = pn.widgets.Select(label="Required format to re-tile", width=320)
        self.edit_target.param.watch(lambda _: self._refresh_editor(), "value")
        self.widget = TilingWidget(sizing_mode="stretch_width", min_height=120)
        self.widget.param.watch(self._on_committed, "committed")
        self._count_inputs = CountInputs(self.widget, self.commit)
        self.edit_figures = pn.pane.HTML("", **html)
        self.reset_button = pn.widgets.Button(label="Reset this format", width=150)
        self.reset_button.on_click(lambda _: self.reset_edit())
        return [
            pn.pane.HTML(
                "<div class='ts-sv'><h4>Tiling editor: try another tiling of a required format</h4></div>", **html
            ),
            pn.Row(self.edit_target, pn.Column(pn.Spacer(height=18), self.reset_button)),
            self.widget,
            self.edit_figures,
        ]

    def _target(self) -> FormatPair | None:
        key = self.edit_target.value
        return next((p for p in self.pairs if p.key == key), None)

    def tiling_of(self, key: str) -> TensorTiling:
        """The required tiling of target ``key`` as edited here (the plan's when not edited)."""
        pair = next(p for p in self.pairs if p.key == key)
        return self._edits.get((self.operation_id, key), pair.required.format.layout.tiling)

    def edited_shard_bytes(self, key: str) -> int:
        pair = next(p for p in self.pairs if p.key == key)
        if pair.shape is None:  # (the editor offers only formats whose shape is known)
            raise ValueError(f"{pair.label}: no known shape")
        return shard_bytes(pair.shape, pair.required.format.precision.element_bytes, self.tiling_of(key))

    def _refresh_editor(self) -> None:
        pair = self._target()
        if pair is None or pair.shape is None:
            self.widget.param.update(
                **self._count_inputs.clear(), axes=[], show_replicas=False, disabled=True, message="", message_axis=""
            )
            self.edit_figures.object = (
                "<div class='ts-sv ts-note'>Nothing to re-tile: no required format with a known shape.</div>"
            )
            return
        tiling = self.tiling_of(pair.key)
        try:
            bands = tiling_rules.axis_bands(pair.shape, tiling, self.tile_limit)
        except ShapeMismatch as exc:
            self.widget.param.update(**self._count_inputs.clear(), axes=[], show_replicas=False, disabled=True)
            self.edit_figures.object = f"<div class='ts-sv'><div class='ts-error'>{esc(exc)}</div></div>"
            return
        stops = tiling_rules.replica_stops(tiling, self.tile_limit)
        valid = tiling_rules.valid_replica_counts(tiling, self.tile_limit)
        counts = {str(k): int(band["partitions"]) for k, band in enumerate(bands)}
        counts[tiling_rules.REPLICAS] = int(tiling.replicas)
        self.widget.param.update(
            **self._count_inputs.show(counts, identity=(self.operation_id, pair.key, len(bands))),
            axes=bands,
            replicas=int(tiling.replicas),
            replica_counts=stops,
            valid_replica_counts=tiling_rules.accepted(stops, valid),
            max_replicas=max(valid[-1] if valid else 0, 1),
            tile_product=math.prod(a.partitions for a in tiling.axes),
            device_tiles=self.tile_limit,
            show_replicas=True,
            disabled=False,
        )
        self.reset_button.disabled = (self.operation_id, pair.key) not in self._edits
        self.edit_figures.object = self._edit_figures_html(pair, pair.shape, tiling)

    def _edit_figures_html(self, pair: FormatPair, shape: tuple[int, ...], tiling: TensorTiling) -> str:
        element = pair.required.format.precision.element_bytes
        edited = shard_bytes(shape, element, tiling)
        required = pair.required.shard_bytes
        is_edited = (self.operation_id, pair.key) in self._edits
        rows = []
        if pair.arrives is not None:
            rows.append(
                (
                    "arrives in",
                    format_figures(pair.arrives.format, pair.arrives.shard_bytes),
                    tiling_summary(pair.arrives.format.layout.tiling),
                    "",
                )
            )
        rows.append(
            (
                "plan requires",
                format_figures(pair.required.format, required),
                tiling_summary(pair.required.format.layout.tiling),
                "",
            )
        )
        change = (
            "" if not is_edited or required is None else f"{fmt_signed_bytes(edited - required)} per tile vs the plan"
        )
        tiles = tiling.tile_count
        rows.append(
            (
                "edited" if is_edited else "edited (no change yet)",
                f"{fmt_bytes(edited)} on {tiles:,} tile{'s' if tiles != 1 else ''}",
                f"{tiling_summary(tiling)} ({tiles:,} of {self.tile_limit:,} tiles)",
                change,
            )
        )
        body = "".join(
            f"<tr{' class=ts-edited' if label.startswith('edited') and is_edited else ''}><td class='k'>{esc(label)}</td>"
            f"<td class='ts-big' data-testid='ts-edit-{esc(label.split()[0])}'>{esc(figure)}</td>"
            f"<td class='ts-debug'>{esc(detail)}</td><td>{esc(note)}</td></tr>"
            for label, figure, detail, note in rows
        )
        return (
            f"<div class='ts-sv' data-testid='ts-search-edit-figures'><table>{body}</table>"
            "<div class='ts-note'>An exploration: the plan and the file are unchanged. Allowed: 1 to blocks partitions per axis, "
            f"at least 1 replica, at most {self.tile_limit:,} tiles (the config's tile count).</div></div>"
        )

    @property
    def count_inputs(self) -> list:
        """The numeric inputs beside the bands: one per axis, then replicas."""
        return self._count_inputs.fields

    def _on_committed(self, event) -> None:
        found = committed_count(event.new)
        if found is not None:
            self.commit(*found)

    def commit(self, key: str, count: int) -> str | None:
        """Set handle ``key`` ("0", "1", … or "replicas") of the shown target to ``count``.
        Returns why it was refused (also shown at the handle), or None."""
        pair = self._target()
        if pair is None or pair.shape is None or key not in self._count_inputs.counts:
            return None
        tiling = self.tiling_of(pair.key)
        handle = key if key == tiling_rules.REPLICAS else int(key)
        violation = tiling_rules.count_violation(pair.shape, tiling, handle, count, self.tile_limit)
        if violation is not None:
            refusal = refusal_text(pair.shape, tiling, handle, count, violation, self.tile_limit)
            self.widget.param.update(message=refusal, message_axis=key, revision=self.widget.revision + 1)
            self._count_inputs.snap_back()  # the typed count snaps back too
            return refusal
        edited = tiling_rules.with_count(tiling, handle, count)
        target = (self.operation_id, pair.key)
        if edited == pair.required.format.layout.tiling:
            self._edits.pop(target, None)
        else:
            self._edits[target] = edited
        self.widget.param.update(message="", message_axis="", revision=self.widget.revision + 1)
        self._refresh_editor()
        return None

    def reset_edit(self) -> None:
        pair = self._target()
        if pair is not None:
            self._edits.pop((self.operation_id, pair.key), None)
            self.widget.param.update(message="", message_axis="", revision=self.widget.revision + 1)
            self._refresh_editor()
