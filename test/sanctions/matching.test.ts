// The matching engine of D18 on the committed fixture lists: names that must hit (exact, reordered,
// abbreviated, transliterated, misspelt; organisations with and without legal forms), names that must not
// (unrelated, near misses, the other kind of party), the date-of-birth and country adjustments, order and
// limit of the hits, and the blocking against a full scan of a generated list.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateOfacList, misspell, reorder, seededRandom } from '../../bench/lib/sanctions-list.ts';
import { parseOfacSdn } from '../../src/sanctions/formats/ofac.ts';
import { parseOpenSanctions } from '../../src/sanctions/formats/opensanctions.ts';
import type { ListEntry } from '../../src/sanctions/formats/types.ts';
import {
  type IndexedEntry,
  MatchIndex,
  type MatchQuery,
  nameScore,
  tokenScore,
} from '../../src/sanctions/matching/engine.ts';
import { dropLegalForms, nameTokens, normaliseName } from '../../src/sanctions/matching/normalise.ts';
import { ofacFiles, openSanctionsText } from './fixtures.ts';

const entries: IndexedEntry[] = [
  ...parseOfacSdn(ofacFiles()).map((entry) => ({ ...entry, list: 'ofac-sdn' })),
  ...parseOpenSanctions(openSanctionsText()).map((entry) => ({ ...entry, list: 'opensanctions' })),
];
const index = new MatchIndex(entries);
const THRESHOLD = 0.85;

const person = (name: string, extra: Partial<MatchQuery> = {}): MatchQuery => ({
  entityType: 'individual',
  name,
  ...extra,
});
const company = (name: string): MatchQuery => ({ entityType: 'organisation', name });

/** The hits as `entry_id score matched_name`, best first. */
function hits(query: MatchQuery, threshold = THRESHOLD): string[] {
  return index.match(query, threshold).map((hit) => `${hit.entry_id} ${hit.score} ${hit.matched_name}`);
}

describe('name normalisation', () => {
  it('folds case, diacritics, punctuation and Cyrillic script into words', () => {
    assert.deepEqual(nameTokens('  Hans-Peter MÜLLER  '), ['hans', 'peter', 'muller']);
    assert.deepEqual(nameTokens("O'Brien, Seán"), ['obrien', 'sean']);
    assert.deepEqual(nameTokens('Straße Łódź Ørsted'), ['strasse', 'lodz', 'orsted']);
    assert.deepEqual(nameTokens('Дмитрий Соколов'), ['dmitrii', 'sokolov']);
    assert.deepEqual(nameTokens('Юлия Щербакова'), ['iuliia', 'shcherbakova']);
    assert.deepEqual(nameTokens('ＡＣＭＥ'), ['acme'], 'NFKD folds full-width letters');
    assert.deepEqual(nameTokens('!!! ...'), []);
  });

  it('drops characters that show nothing instead of splitting a word on them; whitespace still splits', () => {
    // Soft hyphen, zero-width space, zero-width joiner, word joiner, right-to-left override, BOM, BEL.
    for (const invisible of ['\u00AD', '\u200B', '\u200D', '\u2060', '\u202E', '\uFEFF', '\u0007']) {
      assert.deepEqual(
        nameTokens(`Ivan Pet${invisible}rov`),
        ['ivan', 'petrov'],
        `U+${invisible.codePointAt(0)!.toString(16).toUpperCase()}`,
      );
    }
    assert.deepEqual(nameTokens('Ivan\tPetrov\nSergeyevich'), ['ivan', 'petrov', 'sergeyevich']);
    // Controls that separate text: next line (NEL) and the file, group, record and unit separators.
    for (const separator of ['\u0085', '\u001c', '\u001d', '\u001e', '\u001f']) {
      assert.deepEqual(
        nameTokens(`Ivan${separator}S.${separator}Petrov`),
        ['ivan', 's', 'petrov'],
        `U+${separator.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`,
      );
    }
  });

  it('drops legal forms from organisation names only, and keeps a name made only of them', () => {
    assert.deepEqual(normaliseName('ACME Trading S.A. de C.V.', true), ['acme', 'trading']);
    assert.deepEqual(normaliseName('Acme GmbH & Co. KG', true), ['acme']);
    assert.deepEqual(normaliseName('Ooo Romashka', true), ['romashka']);
    assert.deepEqual(normaliseName('Sa Tran', false), ['sa', 'tran']);
    assert.deepEqual(dropLegalForms(['the', 'company', 'ltd']), ['the', 'company', 'ltd']);
  });
});

describe('token and name scores', () => {
  it('scores words by Jaro-Winkler (D18), penalising a length gap, with initials at 0.9', () => {
    assert.equal(tokenScore('petrov', 'petrov'), 1);
    assert.equal(tokenScore('v', 'vladimir'), 0.9);
    assert.equal(tokenScore('vladimir', 'v'), 0.9);
    assert.equal(tokenScore('v', 'ivan'), 0);
    assert.equal(tokenScore('petrov', 'putin'), 0, 'below the floor a pair does not match');
    assert.ok(Math.abs(tokenScore('petrow', 'petrov') - 0.9333) < 1e-3);
    // 'mueller' / 'muller': Jaro-Winkler 0.9167, one letter of seven longer.
    assert.ok(Math.abs(tokenScore('mueller', 'muller') - 0.9167 * (1 - 0.5 / 7)) < 1e-3);
    // Jaro-Winkler alone gives 0.93 to a shared prefix; the length gap keeps it below the floor.
    assert.equal(tokenScore('petrovsky', 'petrov'), 0);
  });

  it('aligns words in any order, the screened words weighing three quarters', () => {
    assert.equal(nameScore(['ivan', 'petrov'], ['petrov', 'ivan']), 1);
    // Every screened word found (0.75), 10 of the list name's 26 letters matched (0.25 x 10/26).
    assert.ok(
      Math.abs(
        nameScore(['ivan', 'petrov'], ['petrov', 'ivan', 'sergeyevichxxx']) - (0.75 + 0.25 * (10 / 24)),
      ) < 1e-9,
    );
    assert.equal(nameScore([], ['x']), 0);
  });
});

describe('matching names that must hit', () => {
  it('exact and reordered names score 1.00', () => {
    assert.deepEqual(hits(person('Ivan Sergeyevich Petrov')), ['1001 1.00 PETROV, Ivan Sergeyevich']);
    assert.deepEqual(hits(person('PETROV Ivan Sergeyevich')), ['1001 1.00 PETROV, Ivan Sergeyevich']);
    assert.deepEqual(hits(person('Petrov, Ivan')), ['1001 1.00 PETROV, Ivan']);
    assert.deepEqual(hits(person('Jong Su Kim')), ['1007 1.00 KIM, Jong Su']);
  });

  it('abbreviated given names', () => {
    assert.deepEqual(hits(person('I. S. Petrov')), ['1001 0.96 PETROV, Ivan Sergeyevich']);
    assert.deepEqual(hits(person('H. P. Muller')), ['1005 0.97 MULLER, Hans Peter']);
  });

  it('transliterated names: diacritics, Cyrillic script, other romanisations', () => {
    assert.deepEqual(hits(person('Hans-Peter Müller')), ['1005 1.00 MULLER, Hans Peter']);
    assert.deepEqual(hits(person('Дмитрий Александрович Соколов')), [
      'NK-4Fk2qTzv9d3uXn 1.00 Дмитрий Александрович Соколов',
    ]);
    assert.deepEqual(hits(person('Дмитрий Соколов')), ['NK-4Fk2qTzv9d3uXn 0.92 Dmitry Sokolov']);
    assert.deepEqual(hits(person('Aleksandr Volkov')), ['1009 0.94 VOLKOV, Alexander']);
    assert.deepEqual(hits(person('Maria Fernanda Quintero Rios')), [
      'NK-2Bv8yRt5nKq4Zw 1.00 María Fernanda Quintero Ríos',
    ]);
  });

  it('misspelt names', () => {
    assert.deepEqual(hits(person('Ivan Petrow')), ['1001 0.96 PETROV, Ivan']);
    assert.deepEqual(hits(person('Iwan Petrov')), ['1001 0.94 PETROV, Ivan']);
    assert.deepEqual(hits(person('Khalid Al-Rashidy')), ['1002 0.95 AL-RASHIDI, Khaled']);
    assert.deepEqual(hits(person('Dmitriy Sokolov')), ['NK-4Fk2qTzv9d3uXn 0.95 Dmitry Sokolov']);
    // Common spellings of one name: German "ue" for "ü", a vowel of another romanisation.
    assert.deepEqual(hits(person('Hans Peter Mueller')), ['1005 0.94 MULLER, Hans Peter']);
    assert.deepEqual(hits(person('Khaled Mahmud Al-Rashidy')), ['1002 0.93 AL-RASHIDI, Khalid Mahmoud']);
    // A surname a few letters from a listed one is for a person to look at.
    assert.deepEqual(hits(person('Ivan Petrenko')), ['1001 0.88 PETROFF, Ivan']);
  });

  it('organisations with and without their legal forms', () => {
    for (const name of [
      'Northwind Maritime Trading',
      'Northwind Maritime Trading Ltd',
      'NORTHWIND MARITIME TRADING L.L.C.',
    ]) {
      assert.deepEqual(hits(company(name)), ['1003 1.00 NORTHWIND MARITIME TRADING LLC'], name);
    }
    assert.deepEqual(hits(company('North Wind Shipping Company')), ['1003 1.00 NORTH WIND SHIPPING CO.']);
    assert.deepEqual(hits(company('Baltic Amber Holdings GmbH')), [
      'NK-7Hc1mWpQ2sLr8e 1.00 Baltic Amber Holdings AG',
    ]);
    assert.deepEqual(hits(company('Banco del Sur de Caracas')), ['1006 1.00 BANCO DEL SUR DE CARACAS, C.A.']);
    assert.deepEqual(hits(company('Golden Crescent Exchange')), [
      '1008 1.00 GOLDEN CRESCENT EXCHANGE COMPANY',
    ]);
    assert.deepEqual(
      hits(company('Ocean Pearl')),
      ['1004 1.00 OCEAN PEARL'],
      'vessels are screened as organisations',
    );
    assert.deepEqual(hits(company('Eastern Horizon')), ['NK-3Mn4bVc8xZa6Sd 1.00 Eastern Horizon']);
  });
});

describe('common spellings of one name (D18: Jaro-Winkler word by word)', () => {
  const spellings = new MatchIndex([
    { ...blank('V-1'), name: 'MUHAMMAD, Ali', list: 'variants' },
    { ...blank('V-2'), name: 'BIN LADEN, Osama', list: 'variants' },
    { ...blank('V-3'), name: 'MÜLLER, Hans', list: 'variants' },
    { ...blank('V-4'), name: 'SMITH, John', list: 'variants' },
  ]);
  const found = (name: string) =>
    spellings.match(person(name), THRESHOLD).map((hit) => `${hit.entry_id} ${hit.score} ${hit.matched_name}`);

  it('hits another romanisation or a transliterated letter at the default threshold', () => {
    assert.deepEqual(found('Mohammed Ali'), ['V-1 0.89 MUHAMMAD, Ali']);
    assert.deepEqual(found('Usama bin Ladin'), ['V-2 0.91 BIN LADEN, Osama']);
    assert.deepEqual(found('Hans Mueller'), ['V-3 0.91 MÜLLER, Hans']);
    assert.deepEqual(found('Jon Smyth'), ['V-4 0.86 SMITH, John']);
  });
});

describe('matching names that must not hit', () => {
  it('unrelated names', () => {
    for (const name of ['John Smith', 'Maria Garcia Lopez', 'Wei Chen'])
      assert.deepEqual(hits(person(name)), [], name);
    for (const name of ['Acme Widgets Limited', 'Global Trade Partners'])
      assert.deepEqual(hits(company(name)), [], name);
  });

  it('near misses: one word shared, a longer or different surname, another given name', () => {
    assert.deepEqual(hits(person('Vladimir Petrov')), []);
    assert.deepEqual(hits(person('Ivan Petrovsky')), []);
    assert.deepEqual(hits(person('Kim Jong Un')), []);
    assert.deepEqual(hits(company('Golden Crescent Bakery')), []);
    assert.deepEqual(hits(company('Ocean Pearl Shipping')), []);
    assert.deepEqual(hits(company('Northwind Shipping')), []);
  });

  it('an individual is not matched against organisations, nor an organisation against individuals', () => {
    assert.deepEqual(hits(person('Ocean Pearl')), []);
    assert.deepEqual(hits(company('Ivan Sergeyevich Petrov')), []);
    // An OpenSanctions LegalEntity (kind unknown) is matched against both.
    assert.deepEqual(hits(person('Eastern Horizon')), ['NK-3Mn4bVc8xZa6Sd 1.00 Eastern Horizon']);
  });

  it('a name that normalises to nothing matches nothing', () => {
    assert.deepEqual(hits(person('...')), []);
  });
});

describe('date of birth and country', () => {
  it('a contradicting date of birth lowers the score by 0.15; an agreeing one adds nothing', () => {
    assert.deepEqual(hits(person('Ivan Sergeyevich Petrov', { dateOfBirth: '1965-03-12' })), [
      '1001 1.00 PETROV, Ivan Sergeyevich',
    ]);
    assert.deepEqual(hits(person('Ivan Sergeyevich Petrov', { dateOfBirth: '1966-03-12' })), [
      '1001 0.85 PETROV, Ivan Sergeyevich',
    ]);
    // A fuzzy match with a contradicting date falls below the threshold.
    assert.deepEqual(hits(person('Ivan Petrow', { dateOfBirth: '1990-01-01' })), []);
  });

  it('partial and approximate dates: "circa 1970" covers 1969 to 1971, "Jun 1972" the month', () => {
    const khalid = 'Khalid Mahmoud Al-Rashidi';
    assert.deepEqual(hits(person(khalid, { dateOfBirth: '1969-02-01' })), [
      '1002 1.00 AL-RASHIDI, Khalid Mahmoud',
    ]);
    assert.deepEqual(hits(person(khalid, { dateOfBirth: '1972-12-31' })), [
      '1002 1.00 AL-RASHIDI, Khalid Mahmoud',
    ]);
    assert.deepEqual(hits(person(khalid, { dateOfBirth: '1975-06-01' })), [
      '1002 0.85 AL-RASHIDI, Khalid Mahmoud',
    ]);
    const volkov = 'Aleksandr Nikolayevich Volkov';
    assert.deepEqual(hits(person(volkov, { dateOfBirth: '1972-06-30' })), [
      '1009 1.00 VOLKOV, Aleksandr Nikolayevich',
    ]);
    assert.deepEqual(hits(person(volkov, { dateOfBirth: '1972-07-01' })), [
      '1009 0.85 VOLKOV, Aleksandr Nikolayevich',
    ]);
  });

  it("a country outside the entry's countries lowers the score by 0.10; an entry without any is not judged", () => {
    assert.deepEqual(hits(person('Ivan Sergeyevich Petrov', { country: 'RU' })), [
      '1001 1.00 PETROV, Ivan Sergeyevich',
    ]);
    assert.deepEqual(hits(person('Ivan Sergeyevich Petrov', { country: 'UA' })), [
      '1001 0.90 PETROV, Ivan Sergeyevich',
    ]);
    assert.deepEqual(hits(company('Golden Crescent Exchange')), [
      '1008 1.00 GOLDEN CRESCENT EXCHANGE COMPANY',
    ]);
    assert.deepEqual(
      index
        .match({ ...company('Banco del Sur de Caracas'), country: 'US' }, THRESHOLD)
        .map((hit) => hit.score),
      ['0.90'],
    );
    // Both contradicted: 1.00 - 0.15 - 0.10.
    assert.deepEqual(
      hits(person('Ivan Sergeyevich Petrov', { dateOfBirth: '1970-01-01', country: 'UA' })),
      [],
    );
    assert.deepEqual(
      hits(person('Ivan Sergeyevich Petrov', { dateOfBirth: '1970-01-01', country: 'UA' }), 0.75),
      ['1001 0.75 PETROV, Ivan Sergeyevich'],
    );
  });
});

describe('hits', () => {
  it('carry the list, entry, matched name, score, kind, programs and countries', () => {
    assert.deepEqual(index.match(company('Northwind Maritime Trading'), THRESHOLD), [
      {
        list: 'ofac-sdn',
        entry_id: '1003',
        matched_name: 'NORTHWIND MARITIME TRADING LLC',
        score: '1.00',
        entity_type: 'organisation',
        programs: ['IRAN', 'IFSR'],
        countries: ['AE', 'IR'],
      },
    ]);
  });

  it('are the entries at or above the threshold, best first, at most 10', () => {
    const surnames = ['PETROV', 'PETROVA', 'PETROW', 'PETROF', 'PETROVV', 'PETRAV', 'PIETROV', 'PETRUV'];
    const many: IndexedEntry[] = [];
    for (const [i, surname] of surnames.entries()) {
      for (const given of ['Ivan', 'Iwan']) {
        many.push({ ...blank(`${surname}-${given}-${i}`), list: 'test', name: `${surname}, ${given}` });
      }
    }
    const found = new MatchIndex(many).match(person('Ivan Petrov'), 0.5);
    assert.equal(found.length, 10);
    assert.equal(found[0]!.matched_name, 'PETROV, Ivan');
    assert.equal(found[0]!.score, '1.00');
    const scores = found.map((hit) => Number(hit.score));
    assert.deepEqual(
      scores,
      [...scores].sort((a, b) => b - a),
    );
    // Equal scores keep a stable order: by list, then entry id.
    for (let i = 1; i < found.length; i++) {
      if (found[i]!.score === found[i - 1]!.score) assert.ok(found[i - 1]!.entry_id < found[i]!.entry_id);
    }
  });

  it('the threshold decides: a 0.96 hit at 0.85 is none at 0.97', () => {
    assert.deepEqual(hits(person('Ivan Petrow'), 0.97), []);
    assert.deepEqual(hits(person('Ivan Petrow'), 0.96), ['1001 0.96 PETROV, Ivan']);
  });
});

function blank(entryId: string): ListEntry {
  return {
    entryId,
    entityType: 'individual',
    name: '',
    aliases: [],
    programs: [],
    countries: [],
    birthDates: [],
  };
}

describe('blocking', () => {
  const list = generateOfacList(3_000, 9_000, 42);
  const generated = new MatchIndex(parseOfacSdn(list.files).map((entry) => ({ ...entry, list: 'gen' })));
  const random = seededRandom(99);
  const queries = Array.from({ length: 150 }, (_, i) => {
    const entry = list.entries[Math.floor(random() * list.entries.length)]!;
    const variants = [
      entry.name,
      misspell(entry.name, random),
      reorder(entry.name),
      misspell(reorder(entry.name), random),
    ];
    return {
      entryId: String(entry.id),
      query: {
        entityType: entry.type === 'individual' ? 'individual' : 'organisation',
        name: variants[i % variants.length]!,
      } satisfies MatchQuery,
    };
  });

  it('scores a small share of the names, and finds every hit a full scan finds, with the same scores', () => {
    let scored = 0;
    let targetFound = 0;
    let hits = 0;
    for (const { entryId, query } of queries) {
      const stats = { scored: 0 };
      const blocked = generated.match(query, THRESHOLD, { stats });
      scored += stats.scored;
      const full = generated.match(query, THRESHOLD, { blocking: false });
      assert.deepEqual(blocked, full, query.name);
      hits += full.length;
      if (full.some((hit) => hit.entry_id === entryId)) targetFound++;
    }
    assert.ok(targetFound >= queries.length * 0.9, `${targetFound} of ${queries.length} names found`);
    assert.ok(hits > targetFound, 'the names also hit entries other than their own');
    const share = scored / queries.length / generated.nameCount;
    assert.ok(share < 0.02, `blocking scored ${(share * 100).toFixed(2)} % of the names per screening`);
  });

  it('scores only the names with enough words for a name of initials, and finds what a full scan finds', () => {
    // Initials alone can match ("I S P" for IVANOV, Sergei Pavlovich), so such a name is not blocked on its
    // words; but a list name matches at most as many initials as it has words.
    const initialsOf = (name: string) =>
      nameTokens(name)
        .map((word) => word[0])
        .join(' ');
    const cases = [
      ...queries.slice(0, 40).map(({ query }) => ({ ...query, name: initialsOf(query.name) })),
      {
        entityType: 'individual' as const,
        name: Array.from({ length: 150 }, (_, i) => 'abcdefghij'[i % 10]).join(' '),
      },
      { entityType: 'individual' as const, name: 'I S Petrov' },
    ];
    let scored = 0;
    for (const query of cases) {
      const stats = { scored: 0 };
      const blocked = generated.match(query, THRESHOLD, { stats });
      assert.deepEqual(blocked, generated.match(query, THRESHOLD, { blocking: false }), query.name);
      scored = stats.scored;
    }
    // The last but one: 150 initials need a list name of at least 119 words; none has that many.
    const many = cases.at(-2)!;
    const stats = { scored: 0 };
    generated.match(many, THRESHOLD, { stats });
    assert.equal(stats.scored, 0);
    assert.ok(scored > 0, 'a name of a few initials and a word is still scored against names');
  });
});
