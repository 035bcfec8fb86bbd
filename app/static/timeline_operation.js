// The timeline tooltip's operation (app/views/timeline.py, a CustomJSHover formatter): the point
// carries a code, the text is looked up in `names` (sent once per profile when the profile has few
// distinct operations, else with the points). Bokeh escapes what this returns, like any @field.
const text = names.data.text[value]
return text == null ? "" : text
