// kvsim's Explorer page: browse the state space through /api/state?path=STEPS.
// CX (the counterexample's path, or null) and FIRST (the state shown first) are set
// by the page before this script.
(function () {
  'use strict';
  var current = FIRST;

  function el(id) { return document.getElementById(id); }

  function pathOf(hash) {
    var m = /^#p=([0-9.]*)$/.exec(hash || '');
    if (!m) { return null; }
    return m[1] === '' ? [] : m[1].split('.').map(Number);
  }

  function name(path) { return path.join('.'); }

  function item(list, path, label, cls) {
    var li = document.createElement('li');
    if (cls) { li.className = cls; }
    var a = document.createElement('a');
    a.href = '#p=' + name(path);
    a.textContent = label;
    li.appendChild(a);
    list.appendChild(li);
    return li;
  }

  function onCx(path) {
    if (!CX || path.length > CX.length) { return false; }
    for (var i = 0; i < path.length; i++) {
      if (CX[i] !== path[i]) { return false; }
    }
    return true;
  }

  function render(view) {
    current = view;
    var trail = el('trail');
    if (!trail) { return; }
    trail.textContent = '';
    view.steps.forEach(function (label, i) {
      item(trail, view.path.slice(0, i + 1), label, onCx(view.path.slice(0, i + 1)) ? 'oncxstep' : '');
    });
    el('state').textContent = view.state.join('\n');
    el('pending').textContent = view.pending.length ? view.pending.join('\n') : 'pending: none';
    var checker = el('checker');
    checker.textContent = 'checker: ' + view.checker;
    checker.className = /^violation/.test(view.checker) ? 'checker bad' : 'checker';
    var succ = el('successors');
    succ.textContent = '';
    var cxHere = onCx(view.path) && CX.length > view.path.length;
    view.successors.forEach(function (s) {
      var cls = s.fault ? 'fault' : '';
      var li = item(succ, view.path.concat([s.step]), s.label, cls);
      if (cxHere && CX[view.path.length] === s.step) { li.firstChild.className = 'oncx'; }
    });
    if (view.successors.length === 0) {
      var li = document.createElement('li');
      li.textContent = 'none: the path ends here';
      succ.appendChild(li);
    }
    el('more').textContent = view.more_successors > 0 ? view.more_successors + ' more not listed' : '';
    el('api-error').textContent = '';
    var cx = el('cx');
    if (cx && cx.tagName === 'OL') {
      Array.prototype.forEach.call(cx.children, function (li, i) {
        li.classList.toggle('here', onCx(view.path) && i === view.path.length - 1);
      });
    }
  }

  function load(path) {
    if (current && name(current.path) === name(path)) { render(current); return; }
    fetch('/api/state?path=' + name(path)).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, body: body }; });
    }).then(function (res) {
      if (res.ok) { render(res.body); } else { el('api-error').textContent = res.body.error; }
    }, function (e) {
      el('api-error').textContent = 'the page cannot reach its server: ' + e;
    });
  }

  function go(path) { location.hash = '#p=' + name(path); }

  window.addEventListener('hashchange', function () {
    var path = pathOf(location.hash);
    if (path) { load(path); }
  });
  var follow = el('follow');
  if (follow) { follow.addEventListener('click', function () { if (CX) { go(CX); } }); }
  var initial = el('initial');
  if (initial) { initial.addEventListener('click', function () { go([]); }); }
  var back = el('back');
  if (back) {
    back.addEventListener('click', function () {
      if (current && current.path.length > 0) { go(current.path.slice(0, -1)); }
    });
  }
  if (current) { render(current); }
  var start = pathOf(location.hash);
  if (start) { load(start); }
})();
