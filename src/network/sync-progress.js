// @ts-check
'use strict';
// The progress line of a sync from the network (SYNC=network), every 5 s: the
// node's block and the network's, blocks a second and time left, and for a
// snap sync the state's accounts and slots fetched so far.

/** The accounts and slots a snap sync has fetched so far, from the node's eth_syncing (null: not a snap sync). */
function snapItems(syncing) {
  if (!syncing || syncing.syncedAccounts === undefined) return null;
  const n = (k) => Number(syncing[k] || 0);
  return {
    items: n('syncedAccounts') + n('syncedStorage'),
    text: `${n('syncedAccounts')} accounts, ${n('syncedStorage')} slots, ${n('healedTrienodes')} trie nodes healed`,
  };
}

/**
 * Logs the sync's progress every 5 s: block, the network's, blocks a second, time left; for a snap sync the state's
 * accounts and slots fetched, their rate, and the time left when the state's size is known (stateItems).
 */
function progressLog(t0, startHead, log, stateItems = null) {
  let last = { at: t0, block: startHead, items: 0 };
  return (now, network, syncing) => {
    const dt = (Date.now() - last.at) / 1000;
    if (dt < 5) return;
    const snap = snapItems(syncing);
    const rate = (now - last.block) / dt;
    const left = rate > 0 && !snap ? `, about ${Math.ceil((network - now) / rate)} s left` : '';
    let state = '';
    if (snap) {
      const itemRate = (snap.items - last.items) / dt;
      const share = stateItems ? ` of about ${stateItems}` : '';
      const togo =
        stateItems && itemRate > 0
          ? `, about ${Math.ceil(Math.max(0, stateItems - snap.items) / itemRate)} s left`
          : '';
      state = `; state: ${snap.text} (${snap.items}${share} items, ${Math.round(itemRate)}/s${togo})`;
    }
    const elapsed = Math.round((Date.now() - t0) / 1000);
    log(`sync from the network (${elapsed} s): block ${now} of ${network}, ${rate.toFixed(1)} blocks/s${left}${state}`);
    last = { at: Date.now(), block: now, items: snap ? snap.items : 0 };
  };
}

module.exports = { progressLog, snapItems };
