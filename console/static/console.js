// agentmem console: conveniences only; every page works without this file.
// "/" focuses the search box (outside text fields).
document.addEventListener("keydown", function (e) {
  if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
  var t = e.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) return;
  var box = document.querySelector("[data-shortcut='/']");
  if (box) { e.preventDefault(); box.focus(); }
});
