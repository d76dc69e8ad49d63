// Opened as files (file://), the site cannot search: browsers do not let its search worker
// load the index from disk, and the theme hides the search box. Say so where the box was, and
// how to serve the site.
document.addEventListener("DOMContentLoaded", function () {
  if (window.location.protocol !== "file:") return;
  var header = document.querySelector(".md-header__inner");
  if (!header || document.querySelector(".tablio-search-note")) return;
  var note = document.createElement("div");
  note.className = "md-header__option tablio-search-note";
  note.textContent = "Search works when the site is served: python3 -m http.server -d build/docs/site";
  header.appendChild(note);
});
