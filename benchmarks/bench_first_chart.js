() => {
  if (!window.Bokeh) return false;
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values())
    if (m.name === 'ts-timeline-usage' && m.data && m.data.step && m.data.step.length > 0) return m.data.step.length;
  return false;
}
