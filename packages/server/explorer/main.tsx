/** The explorer: the views of the public API, each a URL (docs/explorer.md). */
import 'uplot/dist/uPlot.min.css';
import './explorer.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Benchmarks } from './views/benchmarks.tsx';
import { Rank } from './views/rank.tsx';
import { ResultPage } from './views/result.tsx';
import { Results } from './views/results.tsx';
import { Series } from './views/series.tsx';
import { Link } from './ui.tsx';

const VIEWS: Record<string, (p: { search: URLSearchParams }) => preact.JSX.Element> = {
  '': Benchmarks,
  rank: Rank,
  series: Series,
  results: Results,
};

function App() {
  const [url, setUrl] = useState(location.href);
  useEffect(() => {
    const moved = () => setUrl(location.href);
    addEventListener('popstate', moved);
    return () => removeEventListener('popstate', moved);
  }, []);
  const { pathname, search } = new URL(url);
  const [, view = '', id] = /^\/explore\/?([a-z]*)\/?([^/]*)/.exec(pathname) ?? [];
  // A new view (not the first): its heading takes the focus, so that a screen reader announces it.
  const first = useRef(true);
  useEffect(() => {
    if (!first.current) document.querySelector<HTMLElement>('main h1')?.focus();
    first.current = false;
  }, [pathname]);
  const View = VIEWS[view];
  const params = new URLSearchParams(search);
  let body: preact.JSX.Element;
  if (view === 'results' && id) body = <ResultPage id={decodeURIComponent(id)} />;
  else if (View && !id) body = <View search={params} />;
  else body = <h1 tabIndex={-1}>No such view: {pathname}</h1>;
  return (
    <>
      <a class="skip" href="#main">
        Skip to the content
      </a>
      <header>
        <nav aria-label="Explorer">
          <Link href="/explore">Benchmarks</Link>
          <a href="/">API (Swagger UI)</a>
        </nav>
      </header>
      <main id="main" key={pathname}>
        {body}
      </main>
    </>
  );
}

const root = document.getElementById('app')!;
root.textContent = '';
render(<App />, root);
