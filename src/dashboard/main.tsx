/** Dashboard entry: apply the stored theme before the first paint, then render the app. */
import { render } from "preact";
import { App } from "./App";
import { applyStoredTheme } from "./theme";

applyStoredTheme();
render(<App />, document.getElementById("app")!);
