import { render } from "preact";

function App() {
  return <main>Sundeck</main>;
}

render(<App />, document.getElementById("app")!);
