/**
 * The top of the dashboard: decides between first-run setup, login and the signed-in shell, and drops back to
 * login whenever the session ends (401 from any call).
 */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError, api, onUnauthorized } from "./api";
import { Shell } from "./components/Shell";
import { Toasts } from "./components/Toasts";
import { resolvePage } from "./pages";
import { Login } from "./pages/Login";
import { Setup } from "./pages/Setup";
import { navigate, useLocation } from "./router";
import { type Session, SessionContext } from "./session";
import type { Me } from "./types";

type Phase =
  | { kind: "loading" }
  | { kind: "error"; message: string }
  | { kind: "setup" }
  | { kind: "login"; notice?: string }
  | { kind: "ready"; me: Me };

function SignedIn({ session }: { session: Session }) {
  const { path } = useLocation();
  const page = resolvePage(path, session.me);
  const first = useRef(true);
  useEffect(() => {
    document.title = `${page.title} · Sundeck`;
    // after a navigation, put keyboard and screen-reader focus at the start of the new page
    if (first.current) first.current = false;
    else document.getElementById("main")?.focus({ preventScroll: true });
  }, [page.key, page.title]);
  return (
    <SessionContext.Provider value={session}>
      <Shell>
        <div key={page.key}>{page.node}</div>
      </Shell>
    </SessionContext.Provider>
  );
}

/** The application. */
export function App() {
  const [phase, setPhase] = useState<Phase>({ kind: "loading" });

  const enter = useCallback(async () => {
    try {
      setPhase({ kind: "ready", me: await api.me() });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setPhase({ kind: "login" });
      else setPhase({ kind: "error", message: (e as Error).message });
    }
  }, []);

  const boot = useCallback(async () => {
    setPhase({ kind: "loading" });
    try {
      const { needs_setup } = await api.setupStatus();
      if (needs_setup) setPhase({ kind: "setup" });
      else await enter();
    } catch (e) {
      setPhase({ kind: "error", message: (e as Error).message });
    }
  }, [enter]);

  useEffect(() => {
    void boot();
  }, [boot]);

  useEffect(
    () =>
      onUnauthorized(() =>
        setPhase((p) => (p.kind === "ready" ? { kind: "login", notice: "Your session has ended. Please log in again." } : p)),
      ),
    [],
  );

  const me = phase.kind === "ready" ? phase.me : null;
  const session = useMemo<Session | null>(
    () =>
      me && {
        me,
        refresh: enter,
        async logout() {
          await api.logout().catch(() => {});
          navigate("/", { replace: true });
          setPhase({ kind: "login", notice: "You have logged out." });
        },
      },
    [me, enter],
  );

  useEffect(() => {
    if (phase.kind === "setup") document.title = "Set up · Sundeck";
    if (phase.kind === "login") document.title = "Log in · Sundeck";
  }, [phase.kind]);

  let body: ComponentChildren;
  switch (phase.kind) {
    case "loading":
      body = (
        <main class="auth" id="main" aria-busy="true">
          <p class="muted">Loading…</p>
        </main>
      );
      break;
    case "error":
      body = (
        <main class="auth" id="main">
          <section class="card auth-card">
            <h1>Sundeck is not answering</h1>
            <p class="error-text" role="alert">
              {phase.message}
            </p>
            <button type="button" class="btn primary" onClick={() => void boot()}>
              Try again
            </button>
          </section>
        </main>
      );
      break;
    case "setup":
      body = (
        <Setup
          onDone={() => void enter()}
          onTaken={() => setPhase({ kind: "login", notice: "Setup was already completed. Log in with your account." })}
        />
      );
      break;
    case "login":
      body = <Login notice={phase.notice} onDone={() => void enter()} />;
      break;
    case "ready":
      body = <SignedIn session={session!} />;
      break;
  }
  return (
    <>
      {body}
      <Toasts />
    </>
  );
}
