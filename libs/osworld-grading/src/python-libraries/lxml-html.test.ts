import { describe, expect, it } from 'vitest';
import { lxmlPrettyHtml } from './lxml-html.js';

// [input, output of lxml.html.tostring(lxml.html.fromstring(input.encode()), pretty_print=True,
// encoding="unicode")] as printed by lxml 4.9.2 on libxml2 2.9.14 (Debian 12), the versions the
// golden cases were made with. Inputs have no CR/LF, as compare_epub strips them before parsing.
const LXML_OUTPUTS: ReadonlyArray<readonly [string, string]> = [
  [
    '<html><head><title>Chapter 1</title></head><body><h1>Chapter 1</h1><p>The rain passed through the valley.</p><p>Second paragraph.</p></body></html>',
    '<html>\n<head><title>Chapter 1</title></head>\n<body>\n<h1>Chapter 1</h1>\n<p>The rain passed through the valley.</p>\n<p>Second paragraph.</p>\n</body>\n</html>\n',
  ],
  ['<p>hi</p>', '<p>hi</p>\n'],
  ['text only', '<p>text only</p>\n'],
  [
    '<div><p>a<b>b</b>c</p><ul><li>x<li>y</ul></div>',
    '<div>\n<p>a<b>b</b>c</p>\n<ul>\n<li>x</li>\n<li>y</li>\n</ul>\n</div>\n',
  ],
  [
    '<html><body><p>a</p>   <p>b</p> <span>c</span> </body></html>',
    '<html><body>\n<p>a</p>   <p>b</p> <span>c</span> </body></html>\n',
  ],
  [
    '<html><body><p>a<br/>b</p><div/><span/><p/></body></html>',
    '<html><body>\n<p>a<br>b</p>\n<div></div>\n<span></span><p></p>\n</body></html>\n',
  ],
  [
    '<html><body><p>a<div>b</div>c</p></body></html>',
    '<html><body>\n<p>a</p>\n<div>b</div>c</body></html>\n',
  ],
  [
    '<html><body><ul><li>a<li>b</ul></body></html>',
    '<html><body><ul>\n<li>a</li>\n<li>b</li>\n</ul></body></html>\n',
  ],
  [
    '<html><body><section><h2>T</h2><p>x</p></section><nav><p>y</p></nav></body></html>',
    '<html><body>\n<section><h2>T</h2>\n<p>x</p></section><nav><p>y</p></nav>\n</body></html>\n',
  ],
  [
    '<html><head><title>T</title><style>p>a{x:"&"}</style><script>if(a<b&&c)x()</script></head><body><p title="a&quot;b" class=\'x"y\' data-x="it\'s &quot;q&quot;">&lt;&amp;&gt;&copy;&foo;&#x1F600;</p><a href="a b/é.html?x=1&amp;y=2#f">l</a><input type="checkbox" checked disabled="disabled"><img src=" x.png"></body></html>',
    '<html>\n<head>\n<title>T</title>\n<style>p>a{x:"&"}</style>\n<script>if(a<b&&c)x()</script>\n</head>\n<body>\n<p title=\'a"b\' class=\'x"y\' data-x="it\'s &quot;q&quot;">&lt;&amp;&gt;©&amp;foo;😀</p>\n<a href="a%20b/%C3%83%C2%A9.html?x=1&amp;y=2#f">l</a><input type="checkbox" checked disabled><img src="x.png">\n</body>\n</html>\n',
  ],
  [
    '<html xmlns:epub="http://www.idpf.org/2007/ops"><body><p epub:type="x" xml:lang="en">a</p><svg:svg><svg:rect/></svg:svg></body></html>',
    '<html xmlns:epub="http://www.idpf.org/2007/ops"><body>\n<p epub:type="x" xml:lang="en">a</p>\n<svg><rect></rect></svg>\n</body></html>\n',
  ],
  ['<html><body>text<p>a</p>tail</body></html>', '<html><body>text<p>a</p>tail</body></html>\n'],
  [
    '<html><body><p>a</p><!--c--><p>b</p></body></html>',
    '<html><body>\n<p>a</p>\n<!--c--><p>b</p>\n</body></html>\n',
  ],
  ['<html><body><p>é</p></body></html>', '<html><body><p>Ã©</p></body></html>\n'],
  [
    '<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"><title>é</title></head><body><p>é</p></body></html>',
    '<html>\n<head>\n\n<title>é</title>\n</head>\n<body><p>é</p></body>\n</html>\n',
  ],
  [
    '<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en"><head>  <meta charset="UTF-8"/>  <title>Chapter 1</title>  <link rel="stylesheet" type="text/css" href="../Styles/style.css"/></head><body>  <section epub:type="chapter" id="c1">    <h1 class="title">Chapter One</h1>    <p class="first">It was a <em>dark</em> and <strong>stormy</strong> night.</p>    <p>Next&#160;para with <a href="#n1" epub:type="noteref">1</a>.</p>    <blockquote><p>Quote</p></blockquote>    <hr/>    <ol><li>one</li><li>two</li></ol>  </section></body></html>',
    '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en">\n<head>  <meta charset="UTF-8">  <title>Chapter 1</title>  <link rel="stylesheet" type="text/css" href="../Styles/style.css">\n</head>\n<body>  <section epub:type="chapter" id="c1">    <h1 class="title">Chapter One</h1>    <p class="first">It was a <em>dark</em> and <strong>stormy</strong> night.</p>    <p>Next para with <a href="#n1" epub:type="noteref">1</a>.</p>    <blockquote><p>Quote</p></blockquote>    <hr>    <ol>\n<li>one</li>\n<li>two</li>\n</ol>  </section>\n</body>\n</html>\n',
  ],
];

describe('lxmlPrettyHtml', () => {
  it.each(LXML_OUTPUTS)('serialises %j as lxml does', (input, output) => {
    expect(lxmlPrettyHtml(new TextEncoder().encode(input))).toBe(output);
  });

  it('raises ParserError for a document with no element, as lxml does', () => {
    expect(() => lxmlPrettyHtml(new TextEncoder().encode('   '))).toThrow('Document is empty');
  });
});
