// The theme's search button says "Search Ctrl + K" but labels itself "Search"; a label that
// differs from the visible text confuses speech input, so let the visible text be the name.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".search-button__button[aria-label]").forEach(function (button) {
    button.removeAttribute("aria-label");
  });
});
