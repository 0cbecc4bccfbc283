package memstore

import "math/rand/v2"

// index is the ordered set of paths: a skip list, so that an insert, a
// removal and a seek cost O(log n) expected and a range walk costs what it
// returns. The driver's mutex guards it.
type index struct {
	head  node // sentinel; head.next[i] is the first node of level i
	level int  // levels in use (≥ 1)
	len   int
}

type node struct {
	key  string
	next []*node
}

// maxLevel bounds the tower height: with p = 1/4 it serves 4^maxLevel
// keys at full speed.
const maxLevel = 20

func newIndex() *index {
	return &index{head: node{next: make([]*node, maxLevel)}, level: 1}
}

// randomLevel draws a tower height: level k with probability (1/4)^(k-1).
func randomLevel() int {
	l := 1
	for l < maxLevel && rand.Uint32()&3 == 0 {
		l++
	}
	return l
}

// path fills prev with, for each level, the last node before key.
func (x *index) path(key string, prev *[maxLevel]*node) {
	n := &x.head
	for i := x.level - 1; i >= 0; i-- {
		for n.next[i] != nil && n.next[i].key < key {
			n = n.next[i]
		}
		prev[i] = n
	}
}

// insert adds key; it reports false when key is already present.
func (x *index) insert(key string) bool {
	var prev [maxLevel]*node
	x.path(key, &prev)
	if n := prev[0].next[0]; n != nil && n.key == key {
		return false
	}
	l := randomLevel()
	for ; x.level < l; x.level++ {
		prev[x.level] = &x.head
	}
	n := &node{key: key, next: make([]*node, l)}
	for i := range l {
		n.next[i], prev[i].next[i] = prev[i].next[i], n
	}
	x.len++
	return true
}

// remove deletes key; it reports false when key is absent.
func (x *index) remove(key string) bool {
	var prev [maxLevel]*node
	x.path(key, &prev)
	n := prev[0].next[0]
	if n == nil || n.key != key {
		return false
	}
	for i := range len(n.next) {
		prev[i].next[i] = n.next[i]
	}
	for x.level > 1 && x.head.next[x.level-1] == nil {
		x.level--
	}
	x.len--
	return true
}

// seek returns the first node whose key is ≥ key, or nil.
func (x *index) seek(key string) *node {
	var prev [maxLevel]*node
	x.path(key, &prev)
	return prev[0].next[0]
}

// keys returns every key in order (tests).
func (x *index) keys() []string {
	out := make([]string, 0, x.len)
	for n := x.head.next[0]; n != nil; n = n.next[0] {
		out = append(out, n.key)
	}
	return out
}
