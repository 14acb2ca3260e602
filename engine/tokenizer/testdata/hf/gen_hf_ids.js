// Writes HF tokenizers (Rust, via @anush008/tokenizers) encodings of texts.
const { Tokenizer } = require('@anush008/tokenizers');
const fs = require('fs');
(async () => {
  const [tokPath, textPath, outPath] = process.argv.slice(2);
  const tok = Tokenizer.fromFile(tokPath);
  const texts = JSON.parse(fs.readFileSync(textPath, 'utf8'));
  const out = [];
  for (const s of texts) {
    const a = await tok.encode(s, null, {addSpecialTokens: true});
    const b = await tok.encode(s, null, {addSpecialTokens: false});
    out.push({text: s, ids: a.getIds(), ids_no_special: b.getIds()});
  }
  fs.writeFileSync(outPath, JSON.stringify(out, null, 0) + "\n");
})();
