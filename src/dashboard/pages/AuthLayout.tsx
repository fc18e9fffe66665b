/** The centred card of the signed-out pages (first-run setup and login). */
import type { ComponentChildren } from "preact";
import { Icon } from "../components/icons";
import { ThemeToggle } from "../components/ThemeToggle";

/** A card with the product name, a title and the form. */
export function AuthLayout({
  title,
  intro,
  children,
}: {
  title: string;
  intro?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <main class="auth" id="main">
      <div class="auth-tools">
        <ThemeToggle />
      </div>
      <section class="card auth-card" aria-labelledby="auth-title">
        <p class="brand">
          <Icon name="logo" />
          <span>Sundeck</span>
        </p>
        <h1 id="auth-title">{title}</h1>
        {intro && <p class="muted">{intro}</p>}
        {children}
      </section>
    </main>
  );
}
