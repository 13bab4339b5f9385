//! The report and serve's page in a real browser: headless Chromium (Debian's `chromium`;
//! `FPDB_CHROMIUM` names another) driven over the DevTools protocol (a WebSocket, tungstenite).
//! Text is typed with `Input.insertText` and buttons pressed with mouse events at their place,
//! as a person would; what the scripts drew is read from the DOM. One screenshot of each view is
//! kept under `target/browser/` for a person to look at.
//!
//! Without Chromium the test says SKIPPED and passes, unless `FPDB_REQUIRE_BROWSER` is set
//! (`.ci/run` sets it; `scripts/test.sh` installs Chromium).

use crate::common;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

use common::server::{http, Server};
use common::*;

/// A headless Chromium with one page attached.
struct Chrome {
    child: Child,
    ws: WebSocket<TcpStream>,
    session: String,
    next: u64,
    _profile: tempfile::TempDir,
}

impl Chrome {
    /// Chromium started, or why not.
    fn launch() -> Result<Chrome, String> {
        let bin = std::env::var("FPDB_CHROMIUM").unwrap_or_else(|_| "chromium".into());
        let profile = tempfile::tempdir().unwrap();
        // The flags Chromium needs on a machine without a network or a display: no first-run
        // page, no background fetches (refused here, many at a time), no GPU, no sandbox (root).
        let mut child = Command::new(&bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--window-size=1280,1400",
                "--remote-debugging-port=0",
                "--allow-file-access-from-files",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{bin}`: {e}"))?;
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = loop {
            match lines.next() {
                Some(Ok(l)) => {
                    if let Some(at) = l.find("ws://") {
                        break l[at..].trim().to_string();
                    }
                }
                _ => return Err(format!("`{bin}` exited before listening")),
            }
        };
        // Keep reading its log so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
        let hostport = url["ws://".len()..].split('/').next().unwrap().to_string();
        let stream = TcpStream::connect(&hostport).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let (ws, _) = tungstenite::client(url.as_str(), stream).map_err(|e| e.to_string())?;
        let mut c = Chrome {
            child,
            ws,
            session: String::new(),
            next: 0,
            _profile: profile,
        };
        let target = c.call("Target.createTarget", json!({"url": "about:blank"}));
        let attached = c.call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        c.session = attached["sessionId"].as_str().unwrap().to_string();
        c.call("Page.enable", json!({}));
        c.call("Runtime.enable", json!({}));
        c.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1280, "height": 1400, "deviceScaleFactor": 1, "mobile": false}),
        );
        Ok(c)
    }

    /// One protocol command and its result (events in between are passed over).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .expect("send to Chromium");
        loop {
            let m = self.ws.read().expect("read from Chromium");
            let Message::Text(t) = m else { continue };
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["id"] == json!(id) {
                assert!(v["error"].is_null(), "{method}: {}", v["error"]);
                return v["result"].clone();
            }
        }
    }

    /// A JavaScript expression's value (promises awaited).
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            r["exceptionDetails"].is_null(),
            "{expr}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// Wait until `expr` is truthy; its value.
    fn wait_for(&mut self, expr: &str, what: &str) -> Value {
        let start = Instant::now();
        loop {
            let v = self.eval(expr);
            if !(v.is_null() || v == json!(false) || v == json!(0) || v == json!("")) {
                return v;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "waited 30 s for {what} ({expr}); page text:\n{}",
                self.eval("document.body ? document.body.innerText : ''")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for(
            &format!(
                "document.readyState === 'complete' && location.href === {}",
                json!(url)
            ),
            url,
        );
    }

    /// A press of the left button at the middle of the element `selector` names.
    fn click(&mut self, selector: &str) {
        let at = self.wait_for(
            &format!(
                "(() => {{ const e = document.querySelector({}); if (!e) return null; e.scrollIntoView({{block: 'center'}}); \
                 const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
                json!(selector)
            ),
            selector,
        );
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": at[0], "y": at[1], "button": "left", "clickCount": 1}),
            );
        }
    }

    /// Text typed into the field `selector` names (as a paste or an input method inserts it).
    fn type_into(&mut self, selector: &str, text: &str) {
        self.click(selector);
        self.call("Input.insertText", json!({"text": text}));
    }

    /// A screenshot of the whole page, kept at `path`.
    fn screenshot(&mut self, path: &Path) {
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Chrome {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the screenshots are kept: `target/browser/` of the project.
fn shots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser")
}

const ORIGINAL: &str =
    "国务院办公厅日前印发通知，要求各地加快推进政务服务标准化、规范化、便利化。\n\
    通知提出，到2025年底，政务服务事项全面实现一网通办，企业和群众办事更加方便快捷。\n\
    各地区各部门要加强组织领导，细化工作措施，确保各项任务落到实处，让群众少跑腿。";

/// A crawl of two days: an article on news.example copied by two other hosts, a page whose
/// title and URL try to inject markup and script, and unrelated pages.
fn crawl(dir: &Path) -> (String, usize) {
    let day1 = [
        json!({"id": "news-1", "url": "https://www.news.example/a/1.html", "title": "政务服务通知", "text": ORIGINAL}),
        json!({"id": "solo-1", "url": "https://blog.example/p/9", "title": "Harbour", "text": "The harbour master counted every fishing boat before the storm arrived, and the ferry stayed in port.\nVolunteers stacked sandbags along the old sea wall through the night."}),
    ];
    let day2 = [
        json!({"id": "copy-b", "url": "https://copier.example/x/77", "title": "【转载】政务服务", "text": format!("【转载】\n{ORIGINAL}\n（来源：网络）")}),
        json!({"id": "copy-c", "url": "http://mirror.example/m?id=3", "title": "<img src=x onerror=\"document.title='pwned'\"></script><script>document.title='pwned'</script>", "text": format!("{ORIGINAL}\n责任编辑：王某")}),
        json!({"id": "evil-url", "url": "javascript:document.title='pwned'", "title": "link", "text": "A page whose address is a script: the report must show it as text, never as a link one could follow."}),
    ];
    for (day, docs, now) in [
        ("d1.jsonl", &day1[..], "1764028800"),
        ("d2.jsonl", &day2[..], "1764115200"),
    ] {
        write_jsonl(&dir.join(day), docs);
        let o = fpdb()
            .current_dir(dir)
            .env("FPDB_NOW", now)
            .args(["--db", "s.db", "ingest", "-q", day])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    ("news-1".into(), 5)
}

#[test]
fn the_report_and_the_page_work_in_a_real_browser() {
    let mut chrome = match Chrome::launch() {
        Ok(c) => c,
        Err(why) => {
            assert!(
                std::env::var_os("FPDB_REQUIRE_BROWSER").is_none(),
                "FPDB_REQUIRE_BROWSER is set but Chromium could not be driven: {why}"
            );
            eprintln!("SKIPPED: the browser test needs Chromium ({why})");
            return;
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (original, documents) = crawl(dir);
    the_report_file(&mut chrome, dir);
    the_page(&mut chrome, dir, &original, documents);
}

/// The report, from a file: its histogram's bars are drawn, one per size class; the days, the
/// host pairs; hostile titles and URLs stay text.
fn the_report_file(chrome: &mut Chrome, dir: &Path) {
    let o = run(dir, &["--db", "s.db", "report", "-o", "report.html"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let data: Value =
        serde_json::from_str(&stdout(&run(dir, &["--db", "s.db", "report", "--json"]))).unwrap();
    let classes = data["cluster_sizes"].as_array().unwrap().len();
    assert!(classes >= 2, "{data}");
    let file = format!("file://{}", dir.join("report.html").display());
    chrome.open(&file);
    let bars = chrome.wait_for(
        "document.querySelectorAll('#size-histogram rect.bar').length",
        "the histogram's bars",
    );
    assert_eq!(bars, json!(classes));
    let heights = chrome.eval(
        "[...document.querySelectorAll('#size-histogram rect.bar')].map(r => Number(r.getAttribute('height')))",
    );
    assert!(
        heights
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h.as_f64().unwrap() > 0.0),
        "{heights}"
    );
    assert_eq!(
        chrome.eval("document.querySelectorAll('#days-chart rect.bar').length"),
        json!(4),
        "two days, documents and duplicates of each"
    );
    let pairs = chrome.eval("[...document.querySelectorAll('#host-pairs tr')].slice(1).map(r => [...r.cells].map(c => c.textContent))");
    assert!(
        pairs
            .as_array()
            .unwrap()
            .contains(&json!(["copier.example", "news.example", "1"])),
        "{pairs}"
    );
    // The hostile title and URL are text: no element was made of them, no script ran.
    assert_eq!(
        chrome.eval("document.querySelectorAll('main img, main script').length"),
        json!(0)
    );
    assert_eq!(
        chrome.eval("document.querySelectorAll('a[href^=\"javascript:\"]').length"),
        json!(0)
    );
    assert_ne!(chrome.eval("document.title"), json!("pwned"));
    assert!(chrome
        .eval("document.body.textContent")
        .as_str()
        .unwrap()
        .contains("onerror="));
    chrome.screenshot(&shots().join("report.png"));
}

/// The page, on a server that wants a token: it asks for it, then shows the live figures; a
/// pasted copy finds its match with the shared sentences marked; its cluster opens.
fn the_page(chrome: &mut Chrome, dir: &Path, original: &str, documents: usize) {
    std::fs::write(dir.join("token"), "browser-test-token-0123456789").unwrap();
    let server = Server::start(dir, "s.db", &["--token-file", "token"]);
    let page = format!("http://{}/", server.addr);
    let (status, body) = http(&server.addr, "GET", "/", &[], &[]);
    assert_eq!(status, 200);
    assert!(body.contains("/ui/page.js"));
    chrome.open(&page);
    chrome.wait_for(
        "!document.getElementById('token-row').hidden",
        "the token field",
    );
    chrome.type_into("#token", "browser-test-token-0123456789");
    chrome.click("#token-save");
    let shown = chrome.wait_for(
        "(document.getElementById('fig-documents') || {}).textContent",
        "the live figures",
    );
    assert_eq!(shown, json!(documents.to_string()));
    chrome.wait_for(
        "document.querySelectorAll('#report #size-histogram rect.bar').length",
        "the page's report",
    );

    // A pasted copy: the match appears with its shared sentences marked.
    let copy = format!("转自新闻网：\n{ORIGINAL}");
    chrome.type_into("#paste", &copy);
    chrome.click("#find");
    let verdict = chrome.wait_for(
        "(document.getElementById('verdict') || {}).textContent",
        "the answer",
    );
    assert!(
        verdict.as_str().unwrap().starts_with("Near-duplicate"),
        "{verdict}"
    );
    assert!(verdict.as_str().unwrap().contains(original), "{verdict}");
    let marked = chrome.eval(&format!(
        "document.querySelectorAll('.match[data-id={}] mark').length",
        json!(original)
    ));
    assert_eq!(
        marked,
        json!(3),
        "the three sentences of the original are marked"
    );
    chrome.screenshot(&shots().join("query.png"));

    // Its cluster, opened from the answer: every member, the original marked, each link.
    chrome.click(&format!(".match[data-id={}] button", json!(original)));
    chrome.wait_for("document.getElementById('cluster-title')", "the cluster");
    let members = chrome.eval(
        "[...document.querySelectorAll('#cluster tr.member')].map(r => [r.cells[0].textContent, r.cells[4].textContent])",
    );
    let members = members.as_array().unwrap();
    assert_eq!(members.len(), 3, "{members:?}");
    assert_eq!(
        members[0],
        json!([format!("{original}original"), "started the cluster"])
    );
    assert!(
        members[1][1]
            .as_str()
            .unwrap()
            .starts_with(&format!("{original} (")),
        "{members:?}"
    );
    chrome.screenshot(&shots().join("cluster.png"));
    assert_eq!(server.stop(), 0);
}
