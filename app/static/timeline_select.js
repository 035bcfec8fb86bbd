// The timeline's Tap, in the browser (app/views/timeline.py): the selected-step line moves to the
// clicked step at once, before the server has answered the same Tap with the step's views. The
// server then sets the line to the same step (clamped to the profile), which changes nothing here.
// Not synced back (sync: false): the server learns of the click from the Tap itself, and a second
// message ahead of it would only delay its answer.
// args: span (the selected-step Span); cb_obj: the Tap event (x in data units).
if (cb_obj.x != null) {
  span.setv({location: Math.max(0, Math.round(cb_obj.x))}, {sync: false})
}
