import { render } from "preact";
import { App } from "./ui/app.js";
import "./styles.css";

render(<App />, document.getElementById("app")!);
