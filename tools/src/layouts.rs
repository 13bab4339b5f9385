//! Page layouts of our own for the short-page set (`src/bin/short_set.rs`): a legacy table
//! layout, a modern one and a Chinese portal, each site with its own name, navigation and
//! footer, and headlines of other articles around the article.

use crate::crc32;
use crate::pages::{with_article, Page, Rng};

/// An article of the set: its key, title, paragraphs and language.
#[derive(Clone)]
pub struct Article {
    pub key: String,
    pub title: String,
    pub paragraphs: Vec<String>,
    pub zh: bool,
}

/// A site: its host and how its pages are made.
pub struct Site<'a> {
    pub host: String,
    pub name: String,
    pub layout: Layout<'a>,
    pub zh: bool,
}

pub enum Layout<'a> {
    /// A real page of the benchmark, its article replaced.
    Real(&'a Page),
    /// The article in a `<td>` between navigation tables.
    Table { br: bool },
    /// `<article>` with a sidebar and a related block.
    Modern,
    /// A Chinese portal's article page.
    Portal,
}

/// What a page shows besides the site: the article's title, its paragraphs, HTML after them,
/// the date, and the most-read and related headlines.
pub struct Shown<'s> {
    pub title: &'s str,
    pub paragraphs: &'s [String],
    pub extra: &'s str,
    pub date: &'s str,
    pub most: &'s [String],
    pub related: &'s [String],
}

impl Site<'_> {
    /// The page of this site showing `p`.
    pub fn page(&self, p: &Shown<'_>, rng: &mut Rng) -> String {
        match &self.layout {
            Layout::Real(t) => with_article(t, p.paragraphs, p.extra),
            Layout::Table { br } => table(self, p, *br, rng),
            Layout::Modern => modern(self, p),
            Layout::Portal => portal(self, p),
        }
    }
}

const SECTIONS_EN: &[&str] = &[
    "Home",
    "News",
    "World",
    "Business",
    "Sports",
    "Entertainment",
    "Health",
    "Science",
    "Technology",
    "Opinion",
    "Weather",
    "Obituaries",
    "Classifieds",
    "Real Estate",
    "Jobs",
    "Autos",
    "Travel",
    "Education",
    "Politics",
    "Lifestyle",
];
const SECTIONS_ZH: &[&str] = &[
    "首页", "新闻", "国内", "国际", "财经", "体育", "娱乐", "科技", "教育", "健康", "汽车", "房产",
    "旅游", "文化", "评论", "图片", "视频", "专题",
];

/// The sites of our own layouts: three legacy table sites, three modern ones, three portals.
pub fn own_sites() -> Vec<Site<'static>> {
    let en = [
        ("www.valleyherald.com", "The Valley Herald"),
        ("news.coastaltimes.net", "Coastal Times"),
        ("www.prairieledger.com", "Prairie Ledger"),
        ("www.metrowire.io", "MetroWire"),
        ("www.thedailybrief.org", "The Daily Brief"),
        ("www.northpost.co", "North Post"),
    ];
    let zh = [
        ("news.huaxiabao.cn", "华夏新闻网"),
        ("www.jiangnanribao.com", "江南日报"),
        ("www.xibuzixun.cn", "西部资讯"),
    ];
    let mut sites = Vec::new();
    for (i, (host, name)) in en.iter().enumerate() {
        sites.push(Site {
            host: (*host).into(),
            name: (*name).into(),
            layout: if i < 3 {
                Layout::Table { br: i != 1 }
            } else {
                Layout::Modern
            },
            zh: false,
        });
    }
    for (host, name) in zh {
        sites.push(Site {
            host: host.into(),
            name: name.into(),
            layout: Layout::Portal,
            zh: true,
        });
    }
    sites
}

/// Each paragraph in a `<p>`, escaped.
fn in_p(paragraphs: &[String]) -> String {
    paragraphs
        .iter()
        .map(|p| format!("<p>{}</p>", esc(p)))
        .collect()
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A site's navigation: `n` of its sections, starting from one of its own.
fn nav(site: &Site<'_>, n: usize, sep: &str) -> String {
    let sections = if site.zh { SECTIONS_ZH } else { SECTIONS_EN };
    let start = crc32(&site.host) as usize % sections.len();
    (0..n)
        .map(|i| {
            let s = sections[(start + i) % sections.len()];
            format!(
                "<a href=\"/{}/\">{s}</a>",
                s.to_lowercase().replace(' ', "-")
            )
        })
        .collect::<Vec<_>>()
        .join(sep)
}

fn links(titles: &[String], open: &str, close: &str) -> String {
    titles
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{open}<a href=\"/story/{i}\">{}</a>{close}", esc(t)))
        .collect()
}

/// The legacy table layout.
fn table(site: &Site<'_>, p: &Shown<'_>, br: bool, rng: &mut Rng) -> String {
    let body = if br {
        p.paragraphs
            .iter()
            .map(|p| esc(p))
            .collect::<Vec<_>>()
            .join("<br><br>\n")
    } else {
        p.paragraphs
            .iter()
            .map(|p| format!("<p>{}</p>", esc(p)))
            .collect()
    };
    format!(
        "<html><head><title>{name} - {title}</title></head>\n<body bgcolor=\"#ffffff\">\n\
         <table width=\"100%\" border=\"0\"><tr><td><img src=\"/img/logo.gif\" alt=\"{name}\"></td>\
         <td>{top}</td></tr></table>\n\
         <table width=\"760\" border=\"0\" cellpadding=\"4\"><tr>\n\
         <td width=\"150\" valign=\"top\" bgcolor=\"#eeeeee\"><table>{left}</table>\
         <br><b>Weather</b><br>Today: Partly cloudy, high 64<br>Tonight: Clear, low 41</td>\n\
         <td width=\"460\" valign=\"top\"><font size=\"5\"><b>{title}</b></font><br>\n\
         <font size=\"2\" color=\"#666666\">{date} | By {name} staff</font><br><br>\n{body}{extra}\n\
         <br><br><font size=\"1\"><a href=\"/email\">Email this story</a> | \
         <a href=\"/print\">Printer friendly</a> | <a href=\"/reprints\">Reprints</a> | \
         <a href=\"/discuss\">Discuss ({discuss})</a></font>\n\
         <br><br><b>Related headlines</b><br>{related}</td>\n\
         <td width=\"150\" valign=\"top\"><b>Most read</b><ol>{most}</ol>\
         <b>Subscribe</b><br>Get home delivery for as little as $2.50 a week.</td>\n\
         </tr></table>\n<table width=\"760\"><tr><td align=\"center\"><font size=\"1\">\
         Copyright © 2004 {name}. All rights reserved. | <a href=\"/privacy\">Privacy policy</a> | \
         <a href=\"/contact\">Contact us</a> | <a href=\"/advertise\">Advertise</a></font></td></tr></table>\n\
         </body></html>",
        name = esc(&site.name),
        extra = p.extra,
        date = p.date,
        title = esc(p.title),
        top = nav(site, 8, " | "),
        left = nav(site, 16, "")
            .split("</a>")
            .filter(|s| !s.is_empty())
            .map(|s| format!("<tr><td>{s}</a></td></tr>"))
            .collect::<String>(),
        discuss = rng.below(40),
        related = links(p.related, "&bull; ", "<br>"),
        most = links(p.most, "<li>", "</li>"),
    )
}

/// The modern layout.
fn modern(site: &Site<'_>, p: &Shown<'_>) -> String {
    let body = in_p(p.paragraphs);
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title} | {name}</title></head>\
         <body><header><a class=\"logo\" href=\"/\">{name}</a><nav>{nav}</nav></header>\n\
         <main><article><h1>{title}</h1><div class=\"byline\">By {name} Staff · {date}</div>\
         <div class=\"article-body\">{body}{extra}</div>\
         <div class=\"share\">Share this story: <a>Facebook</a> <a>Twitter</a> <a>Email</a></div></article>\n\
         <aside><h3>Most read</h3><ol>{most}</ol><div class=\"newsletter\"><h3>The morning brief</h3>\
         <p>Sign up for our daily newsletter and get the top stories in your inbox every morning.</p>\
         <form><input type=\"email\"><button>Subscribe</button></form></div></aside>\n\
         <section class=\"related\"><h3>More from {name}</h3><ul>{related}</ul></section></main>\n\
         <footer><p>© 2024 {name} Media. All rights reserved.</p><p><a>About us</a> · <a>Contact</a> · \
         <a>Terms of use</a> · <a>Privacy</a></p></footer></body></html>",
        name = esc(&site.name),
        extra = p.extra,
        date = p.date,
        title = esc(p.title),
        nav = nav(site, 9, " "),
        most = links(p.most, "<li>", "</li>"),
        related = links(p.related, "<li>", " <span>Read the full story.</span></li>"),
    )
}

/// The Chinese portal layout.
fn portal(site: &Site<'_>, p: &Shown<'_>) -> String {
    let body = in_p(p.paragraphs);
    format!(
        "<html><head><meta charset=\"utf-8\"><title>{title}_{name}</title></head><body>\
         <div class=\"top\">{name} | <a>登录</a> <a>注册</a> <a>手机版</a></div>\
         <div class=\"nav\">{nav}</div>\n<div class=\"main\"><div class=\"left\"><h1>{title}</h1>\
         <div class=\"info\">{date} 来源：{name} 作者：本报记者</div><div id=\"content\">{body}{extra}\
         <p class=\"editor\">（责任编辑：王晓明）</p></div><div class=\"share\">分享到：<a>微信</a> \
         <a>微博</a> <a>QQ空间</a></div><div class=\"xgxw\"><h3>相关新闻</h3><ul>{related}</ul></div></div>\n\
         <div class=\"right\"><h3>热点排行</h3><ol>{most}</ol><div class=\"ad\">扫码关注{name}微信公众号，\
         获取更多权威资讯。</div></div></div>\n<div class=\"footer\">关于我们 | 联系方式 | 广告服务 | \
         版权声明<br>版权所有 © {name} 未经授权禁止转载 京ICP备10086号</div></body></html>",
        name = esc(&site.name),
        extra = p.extra,
        date = p.date,
        title = esc(p.title),
        nav = nav(site, 12, " | "),
        most = links(p.most, "<li>", "</li>"),
        related = links(p.related, "<li>", "</li>"),
    )
}

/// A date `day` days into 2024, as the site writes it.
pub fn date(day: usize, zh: bool) -> String {
    let months = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let (m, d) = ((day / 28) % 12, day % 28 + 1);
    if zh {
        format!(
            "2024年{}月{}日 {:02}:{:02}",
            m + 1,
            d,
            7 + day % 12,
            day % 60
        )
    } else {
        format!("{} {d}, 2024", months[m])
    }
}
