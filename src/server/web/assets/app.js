// devmind web page (placeholder while the full page is written)
document.getElementById("app")?.replaceChildren(Object.assign(document.createElement("h1"), { textContent: "devmind" }));
