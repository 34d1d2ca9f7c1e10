// The copy buttons: the only script of the page. Without it the buttons
// stay hidden and each curl line is still one selectable block of text.
document.documentElement.className += " js";
document.addEventListener("click", function (e) {
  var b = e.target.closest ? e.target.closest("button.copy") : null;
  if (!b) return;
  var pre = document.getElementById(b.getAttribute("data-copy"));
  if (!pre) return;
  var say = function (s) {
    b.textContent = s;
    setTimeout(function () { b.textContent = "Copy"; }, 2000);
  };
  var select = function () {
    var range = document.createRange();
    range.selectNodeContents(pre);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (err) { ok = false; }
    say(ok ? "Copied" : "Selected: press Ctrl+C");
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(pre.textContent).then(function () { say("Copied"); }, select);
  } else {
    select();
  }
});
