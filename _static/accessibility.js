// Small fixes to the theme's header buttons, whose accessible names disagree with what
// they show; speech-input users say what they see, so name and visible text must match.
function aqaFixHeaderButtons() {
  // "Search Ctrl + K" is shown, but the button calls itself "Search": use what is shown.
  document.querySelectorAll(".search-button__button[aria-label]").forEach(function (button) {
    button.removeAttribute("aria-label");
  });
  // Folded code cells read "Show code cell source" but are named "Toggle hidden content".
  document.querySelectorAll("summary[aria-label]").forEach(function (summary) {
    if (summary.textContent.trim()) summary.removeAttribute("aria-label");
  });
  // The colour-mode icons carry titles ("Light", "Dark") that join the button's text;
  // they are decoration, and the button is named "Color mode". Font Awesome may already
  // have turned each <i> into an <svg> with a <title>, so clean up both forms.
  document.querySelectorAll(".theme-switch-button .theme-switch").forEach(function (icon) {
    icon.removeAttribute("title");
    icon.removeAttribute("aria-labelledby");
    icon.removeAttribute("role");
    icon.setAttribute("aria-hidden", "true");
    icon.querySelectorAll("title").forEach(function (title) { title.remove(); });
  });
}
document.addEventListener("DOMContentLoaded", aqaFixHeaderButtons);
window.addEventListener("load", aqaFixHeaderButtons);

// The theme wires only the first sidebar toggle of each kind (in the page header, hidden on
// this book's pages); the toggles readers see, above the article, did nothing. Each one
// now presses the wired toggle: on a wide screen the sidebar folds away, on a narrow one
// it opens as a dialog.
function aqaWireSidebarToggles() {
  ["primary", "secondary"].forEach(function (side) {
    var toggles = document.querySelectorAll("." + side + "-toggle");
    toggles.forEach(function (toggle, i) {
      if (i === 0 || toggle.dataset.aqaWired) return;
      toggle.dataset.aqaWired = "true";
      toggle.addEventListener("click", function (event) {
        event.preventDefault();
        toggles[0].click();
      });
    });
  });
}
document.addEventListener("DOMContentLoaded", aqaWireSidebarToggles);
