// agentmem console: conveniences only; every page works without this file.
// Keys, outside text fields: "/" focuses the search box, "e" opens the
// editor on a file page. An element with data-shortcut="<key>" is what the
// key reaches: a field is focused, a link followed.
document.addEventListener("keydown", function (e) {
  if ((e.key !== "/" && e.key !== "e") || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  var t = e.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
  var el = document.querySelector("[data-shortcut='" + e.key + "']");
  if (!el) return;
  e.preventDefault();
  if (el.tagName === "A") el.click();
  else el.focus();
});
