// Drives Debian's Chromium (headless, Playwright core) through the Home
// Assistant UI, as a user would: log in, add the integration, add a second
// conversation agent, paste tools into the options flow's JSON editor (an
// invalid one first), add, edit and delete a tool through the tool editor's
// forms, import two tools from a FastAPI service's OpenAPI document, open
// the Assist dialog, ask for the weather and see the answer.
//
//   node tests/browser/drive.mjs STATE.json ARTIFACT_DIR
//
// STATE.json is written by tests/browser/ha_env.py (Home Assistant URL, user,
// scripted LLM and tool server URLs). Screenshots go to ARTIFACT_DIR/NN-step.png.
// The pictures of the documentation (the tool form, the secrets form, an
// agent's settings, the OpenAPI import, Assist answering through a tool) are
// written to docs/images/ under stable names at every run, so README and
// docs/ show the UI as it is.
// Environment: HTA_BROWSER_DIR (where playwright-core is installed, default
// <repo>/.browser), HTA_CHROMIUM (default /usr/bin/chromium), HTA_DOCS_IMAGES
// (where the documentation's pictures go, default <repo>/docs/images; empty:
// none).
// Exits non-zero on the first failed step (with a screenshot of it).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const browserDir = process.env.HTA_BROWSER_DIR || path.join(ROOT, '.browser');
const { chromium } = createRequire(path.join(browserDir, 'package.json'))('playwright-core');

const [statePath, artifacts] = process.argv.slice(2);
if (!statePath || !artifacts) {
  console.error('usage: node drive.mjs STATE.json ARTIFACT_DIR');
  process.exit(2);
}
const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
fs.mkdirSync(artifacts, { recursive: true });

const QUESTION = "What's the weather in Rome?";
// The scripted model is a small one: the agent reads out a result it can
// say whole itself, with no request for the answer (`Rules.own_answer`),
// and never speaks the tool's emoji (`turn/spoken_text.py`).
const ANSWER = 'Rome: +14°C.';
// Long waits: Home Assistant's UI is slow on 2 cores.
const UI_TIMEOUT = 30_000;

const weatherTool = {
  name: 'get_weather',
  description:
    'Current weather and temperature for a city. Call this whenever the user asks about the weather.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', description: "City name, e.g. 'Paris'" } },
    required: ['city'],
  },
  url: `${state.tools_url}/weather/{city}`,
  method: 'GET',
};
// A typo users make: `metod`. The form must say which tool and which field.
const INVALID_TOOLS = JSON.stringify([{ ...weatherTool, method: undefined, metod: 'GET' }], null, 2);
const VALID_TOOLS = JSON.stringify([weatherTool], null, 2);
const SETTINGS_MENU = 'Settings, tools file and tools as JSON';
const SECRET_VALUE = 'bell-secret-4711';
// Required fields are labelled with a star.
const NAME_FIELD = /^Name\*?$/;
const URL_FIELD = /^URL\*?$/;

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hta-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.HTA_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
  viewport: { width: 1280, height: 800 },
  locale: 'en-US',
  timezoneId: 'UTC',
});
context.setDefaultTimeout(UI_TIMEOUT);
const page = context.pages()[0] ?? (await context.newPage());
const consoleErrors = [];
const notFound = new Set();
page.on('response', (resp) => {
  // Brand icons come from a CDN through /api/brands: none offline.
  if (resp.status() >= 400 && !resp.url().includes('/api/brands/')) notFound.add(`${resp.status()} ${resp.url()}`);
});
page.on('console', (msg) => {
  if (msg.type() === 'error') consoleErrors.push(`${msg.text()} ${msg.location().url || ''}`);
});

// The documentation's pictures (`docShot`): the dialog alone, on a page tall
// enough to show all of it.
const DOC_IMAGES = process.env.HTA_DOCS_IMAGES ?? path.join(ROOT, 'docs', 'images');
const DOC_PAGE_HEIGHT = 1400;
const docImages = [];

let shotNo = 0;
const started = Date.now();
const seconds = (ms) => (ms / 1000).toFixed(1);

async function shot(name) {
  shotNo += 1;
  const file = path.join(artifacts, `${String(shotNo).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  console.log(`drive:   screenshot ${path.relative(process.cwd(), file)}`);
  return file;
}

/** The open dialog's surface (flows, Assist): what a picture shows. */
function dialogSurface() {
  return page.getByRole('dialog').filter({ visible: true }).last();
}

/**
 * A picture for the documentation: docs/images/NAME.png, the open dialog
 * only, on a page `height` px tall (enough to show all of it). `prepare`
 * runs on the tall page before the picture (to scroll or open a section).
 */
async function docShot(name, prepare = async () => {}, height = DOC_PAGE_HEIGHT) {
  if (!DOC_IMAGES) return;
  const size = page.viewportSize();
  await page.setViewportSize({ width: size.width, height });
  try {
    await page.waitForTimeout(500); // the dialog lays out again
    await prepare();
    fs.mkdirSync(DOC_IMAGES, { recursive: true });
    const file = path.join(DOC_IMAGES, `${name}.png`);
    await dialogSurface().screenshot({ path: file, animations: 'disabled', caret: 'hide' });
    docImages.push(file);
    console.log(`drive:   documentation picture ${path.relative(process.cwd(), file)}`);
  } finally {
    await page.setViewportSize(size);
  }
}

async function step(name, fn) {
  const t0 = Date.now();
  console.log(`drive: [${seconds(t0 - started)} s] ${name}`);
  try {
    const result = await fn();
    console.log(`drive:   ok in ${seconds(Date.now() - t0)} s`);
    return result;
  } catch (err) {
    console.error(`drive: FAILED: ${name}\n${err.stack || err}`);
    const file = await shot('FAILED').catch(() => null);
    // What the page offered (roles and names), to fix a locator.
    const aria = await page.locator('body').ariaSnapshot().catch(() => '');
    if (file) fs.writeFileSync(file.replace(/\.png$/, '.aria.txt'), aria);
    throw err;
  }
}

/** Call Home Assistant's websocket API through the frontend's own connection. */
async function callWS(message) {
  return page.evaluate((msg) => document.querySelector('home-assistant').hass.callWS(msg), message);
}

/** The active tools, as the REST endpoint reports them. */
async function activeTools() {
  const resp = await fetch(`${state.url}/api/http_tools_agent/tools`, {
    headers: { Authorization: `Bearer ${state.token}` },
  });
  assert.equal(resp.status, 200);
  return resp.json();
}

/** Open Configure on the integration page and pick a menu entry. */
async function openOptions(menuEntry) {
  await page.getByRole('button', { name: 'Configure' }).first().click();
  await flowDialog().getByText(menuEntry, { exact: true }).click();
}

/** Submit a form of the options flow that saves, and close the dialog. */
async function submitAndClose() {
  await flowDialog().getByRole('button', { name: 'Submit' }).click();
  await flowDialog().getByText(/Options successfully saved|Success/i).first().waitFor();
  await flowDialog().getByRole('button', { name: /finish|close/i }).first().click();
  await flowDialog().waitFor({ state: 'hidden' });
}

async function control() {
  const resp = await fetch(`${state.control_url}/requests`);
  return resp.json();
}

/** The dialog a flow (config, options, subentry) shows. */
const flowDialog = () => page.locator('dialog-data-entry-flow');

async function ourAgents() {
  const entities = await callWS({ type: 'config/entity_registry/list' });
  return entities.filter(
    (e) => e.platform === 'http_tools_agent' && e.entity_id.startsWith('conversation.'),
  );
}

let exitCode = 0;
try {
  await step('log in (the onboarded user)', async () => {
    await page.goto(state.url);
    await page.getByRole('textbox', { name: 'Username' }).fill(state.username);
    await page.getByRole('textbox', { name: 'Password' }).fill(state.password);
    await shot('login');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/(home|lovelace)/, { timeout: 60_000 });
  });

  await step('confirm the HTTP server settings (new config dir: HA asks once)', async () => {
    // Home Assistant 2026.10 migrates the YAML `http:` block (port 8124 here)
    // to a trial config and reverts it (restarting) unless confirmed in 5 min.
    const dialog = page.getByRole('alertdialog').or(page.getByRole('dialog'));
    const confirm = page.getByRole('button', { name: 'Confirm' });
    try {
      await confirm.waitFor({ timeout: 15_000 });
    } catch {
      console.log('drive:   no confirmation asked');
      return;
    }
    await shot('http-config-confirm');
    await confirm.click();
    await dialog.first().waitFor({ state: 'hidden' }).catch(() => {});
  });

  await step('add the integration: Settings > Devices & services > Add integration', async () => {
    await page.goto(`${state.url}/config/integrations/dashboard`);
    await page.getByRole('button', { name: 'Add integration' }).click();
    await page.getByText('Select brand').waitFor();
    await page.keyboard.type('HTTP Tools'); // the search field has the focus
    await page.getByText('HTTP Tools Agent', { exact: true }).click();
    const url = flowDialog().getByRole('textbox', { name: 'Server URL' });
    await url.fill(state.llm_url);
    await shot('add-integration-server-url');
    await flowDialog().getByRole('button', { name: 'Submit' }).click();
    // Success: the flow shows the created entry's device ("Name and assign").
    await flowDialog().getByText(/Name and assign|Created configuration|Success/).first().waitFor();
    await shot('integration-added');
    await flowDialog().getByRole('button', { name: /finish/i }).first().click();
    await flowDialog().waitFor({ state: 'hidden' });
  });

  await step('the entry came with a conversation agent', async () => {
    await page.goto(`${state.url}/config/integrations/integration/http_tools_agent`);
    await page.getByText(/Conversation agent/).first().waitFor();
    const agents = await ourAgents();
    assert.equal(agents.length, 1, `one agent expected, got ${JSON.stringify(agents)}`);
    await shot('entry-with-agent');
  });

  await step('add a second agent: Add conversation agent', async () => {
    await page.getByRole('button', { name: 'Add conversation agent' }).first().click();
    // The form renders after the flow fetched the server's models.
    await flowDialog().getByText('Instructions').first().waitFor();
    await page.waitForTimeout(500);
    await shot('add-conversation-agent');
    // What auto picks for the model, and why, heads the form.
    await flowDialog().getByText(/Auto runs it as a small model: its name says 500M/).waitFor();
    await docShot('agent-settings');
    await docShot('agent-small-model-settings', async () => {
      const section = flowDialog().getByText('Small-model settings', { exact: true });
      await section.click();
      await flowDialog().getByText('Warm up the server').first().waitFor();
      await page.waitForTimeout(600); // the section opens with an animation
      // Scroll its header to the top of the dialog, until it stays there.
      for (let i = 0; i < 10; i += 1) {
        await section.evaluate((el) => el.scrollIntoView({ block: 'start' }));
        await page.waitForTimeout(200);
        const header = await section.boundingBox();
        const dialog = await dialogSurface().boundingBox();
        if (header && dialog && header.y - dialog.y < 120) return;
      }
      throw new Error('the small-model settings did not scroll to the top of the dialog');
    }, 1700);
    await flowDialog().getByRole('button', { name: 'Submit' }).click();
    await flowDialog().getByText(/Created configuration|Success/i).first().waitFor();
    await flowDialog().getByRole('button', { name: /finish|close/i }).first().click();
    await flowDialog().waitFor({ state: 'hidden' });
    let agents = [];
    for (let i = 0; i < 30 && agents.length < 2; i += 1) {
      agents = await ourAgents();
      if (agents.length < 2) await page.waitForTimeout(1000);
    }
    assert.equal(agents.length, 2, `two agents expected, got ${agents.map((a) => a.entity_id)}`);
    await page.reload();
    await page.getByText(/Conversation agent/).first().waitFor();
    await shot('two-agents');
  });

  await step('Configure: invalid tools first, the error names tool and field', async () => {
    await openOptions(SETTINGS_MENU);
    const editor = flowDialog().getByRole('textbox', { name: 'Tools (JSON)' });
    await editor.fill(INVALID_TOOLS);
    await flowDialog().getByRole('button', { name: 'Submit' }).click();
    const error = flowDialog().getByText(/Invalid tools:/);
    await error.waitFor();
    const text = await error.innerText();
    console.log(`drive:   error shown: ${text}`);
    assert.match(text, /get_weather/, 'the error names the tool');
    assert.match(text, /metod/, 'the error names the field');
    await error.scrollIntoViewIfNeeded();
    await shot('options-invalid-tools');
  });

  await step('Configure: a valid tools array saves', async () => {
    const editor = flowDialog().getByRole('textbox', { name: 'Tools (JSON)' });
    await editor.fill(VALID_TOOLS);
    await editor.scrollIntoViewIfNeeded();
    await shot('options-valid-tools');
    await flowDialog().getByRole('button', { name: 'Submit' }).click();
    await flowDialog().getByText(/Options successfully saved|Success/i).first().waitFor();
    await shot('options-saved');
    await flowDialog().getByRole('button', { name: /finish|close/i }).first().click();
    await flowDialog().waitFor({ state: 'hidden' });
  });

  await step('Configure again: the saved tools are active', async () => {
    await openOptions(SETTINGS_MENU);
    await flowDialog().getByText(/Active tools now \(1, source options\): get_weather/).waitFor();
    const editor = flowDialog().getByRole('textbox', { name: 'Tools (JSON)' });
    assert.equal(JSON.parse(await editor.inputValue())[0].name, 'get_weather');
    await shot('options-active-tools');
    await flowDialog().getByRole('button', { name: 'Close' }).first().click();
    await flowDialog().waitFor({ state: 'hidden' });
  });

  await step('Secrets: a key typed in a password field', async () => {
    await openOptions('Secrets (API keys, tokens)');
    const form = flowDialog();
    await form.getByRole('textbox', { name: /^Name/ }).fill('bell_key');
    const value = form.getByRole('textbox', { name: /^Value/ });
    assert.equal(await value.getAttribute('type'), 'password');
    await value.fill(SECRET_VALUE);
    await shot('secrets-form');
    await docShot('secrets-form');
    await submitAndClose();
    await openOptions('Secrets (API keys, tokens)');
    await flowDialog().getByText(/Defined secrets: bell_key/).waitFor();
    const text = await flowDialog().innerText();
    assert.ok(!text.includes(SECRET_VALUE), 'a secret is never shown back');
    await flowDialog().getByRole('button', { name: 'Close' }).first().click();
    await flowDialog().waitFor({ state: 'hidden' });
  });

  await step('Add a tool through the form: an invalid URL first, then saved', async () => {
    await openOptions('Add a tool');
    const form = flowDialog();
    await form.getByRole('textbox', { name: NAME_FIELD }).fill('ring_doorbell');
    await form.getByRole('textbox', { name: 'Description', exact: true }).fill('Ring the doorbell chime.');
    const url = form.getByRole('textbox', { name: URL_FIELD });
    await url.fill('ftp://doorbell.lan/ring');
    await form.getByRole('button', { name: 'Submit' }).click();
    const error = form.getByText(/url: must be an http or https URL/);
    await error.waitFor();
    const text = await error.innerText();
    console.log(`drive:   error shown: ${text}`);
    assert.match(text, /ring_doorbell/, 'the error names the tool');
    await error.scrollIntoViewIfNeeded();
    await shot('tool-form-invalid-url');
    const formText = await form.innerText();
    assert.ok(!formText.includes('Translation error'), 'every string renders');
    await url.fill(`${state.tools_url}/doorbell`);
    // A header, through the object selector's own small form.
    await form.getByRole('button', { name: 'Add', exact: true }).click();
    // Its dialog: "Header*" and "Value*", then its own "Add" button.
    const headerName = page.getByRole('textbox', { name: /^Header\*?$/ });
    await headerName.fill('X-Key');
    await page.getByRole('textbox', { name: /^Value\*?$/ }).fill('{secret:bell_key}');
    await shot('tool-form-header');
    // Two "Add" buttons now: the field's, then its dialog's (later in the page).
    await page.getByRole('button', { name: 'Add', exact: true }).last().click();
    await headerName.waitFor({ state: 'hidden' });
    await form.getByText('X-Key').first().scrollIntoViewIfNeeded();
    await shot('tool-form-add');
    await submitAndClose();
    const body = await activeTools();
    assert.deepEqual(body.tools.map((t) => t.name), ['get_weather', 'ring_doorbell']);
    assert.deepEqual(body.tools[1].headers, { 'X-Key': '{secret:bell_key}' });
    assert.ok(!JSON.stringify(body).includes(SECRET_VALUE), 'no secret in the REST answer');
  });

  await step('Edit the tool through the form: rename it', async () => {
    await openOptions('Edit a tool');
    const form = flowDialog();
    await form.getByRole('radio', { name: 'ring_doorbell' }).check();
    await form.getByRole('button', { name: 'Submit' }).click();
    await form.getByText('Edit the tool ring_doorbell').waitFor();
    const name = form.getByRole('textbox', { name: NAME_FIELD });
    assert.equal(await name.inputValue(), 'ring_doorbell');
    assert.equal(await form.getByRole('textbox', { name: URL_FIELD }).inputValue(), `${state.tools_url}/doorbell`);
    await name.fill('ring_bell');
    await shot('tool-form-edit');
    await submitAndClose();
    const tools = (await activeTools()).tools.map((t) => t.name);
    assert.deepEqual(tools, ['get_weather', 'ring_bell']);
  });

  await step('Delete the tool through the form', async () => {
    await openOptions('Delete tools');
    const form = flowDialog();
    // The check box's own input sits under its styling: click the label.
    await form.getByText('ring_bell', { exact: true }).click();
    assert.ok(await form.getByRole('checkbox', { name: 'ring_bell' }).isChecked());
    assert.ok(!(await form.getByRole('checkbox', { name: 'get_weather' }).isChecked()));
    await shot('tool-form-delete');
    await submitAndClose();
    const body = await activeTools();
    assert.deepEqual(body.tools.map((t) => t.name), ['get_weather']);
    assert.equal(body.enabled, true);
  });

  await step('Import from OpenAPI: URL, tick two operations, pick a secret, save', async () => {
    await openOptions('Import tools from an OpenAPI document');
    const form = flowDialog();
    await form.getByRole('textbox', { name: /^Document URL/ }).fill(state.openapi_url);
    await shot('openapi-url');
    await form.getByRole('button', { name: 'Submit' }).click();
    await form.getByText('Choose the operations').waitFor();
    await form.getByText(/5 operations, grouped by tag/).waitFor();
    // The check box's own input sits under its styling: click the label.
    await form.getByText('rooms · GET /rooms — List Rooms', { exact: true }).click();
    await form.getByText('lights · POST /rooms/{room}/lights — Set Lights', { exact: true }).click();
    await shot('openapi-operations');
    await docShot('openapi-operations');
    await form.getByRole('button', { name: 'Submit' }).click();
    await form.getByText('Tools to create').waitFor();
    await form.getByText('set_lights', { exact: true }).waitFor();
    await form.getByRole('radio', { name: 'bell_key' }).check();
    await form.getByRole('radio', { name: 'bell_key' }).scrollIntoViewIfNeeded();
    await shot('openapi-preview');
    await docShot('openapi-import');
    assert.ok(!(await form.innerText()).includes('Translation error'), 'every string renders');
    await submitAndClose();
    const body = await activeTools();
    assert.deepEqual(body.tools.map((t) => t.name), ['get_weather', 'list_rooms', 'set_lights']);
    const lights = body.tools[2];
    assert.equal(lights.method, 'POST');
    assert.match(lights.url, /\/rooms\/\{room\}\/lights\?transition=\{transition\}$/);
    assert.deepEqual(lights.headers, { 'X-Lights-Key': '{secret:bell_key}' });
  });

  await step('the imported tools are ordinary tools: the tool editor shows them', async () => {
    await page.getByRole('button', { name: 'Configure' }).first().click();
    // The menu lists the tools and the secrets by name.
    await flowDialog().getByText(/Tools in the options: get_weather, list_rooms, set_lights/).waitFor();
    await docShot('options-menu');
    await flowDialog().getByText('Edit a tool', { exact: true }).click();
    const form = flowDialog();
    await form.getByRole('radio', { name: 'set_lights' }).check();
    await form.getByRole('button', { name: 'Submit' }).click();
    await form.getByText('Edit the tool set_lights').waitFor();
    const url = await form.getByRole('textbox', { name: URL_FIELD }).inputValue();
    assert.match(url, /\/rooms\/\{room\}\/lights\?transition=\{transition\}$/);
    await shot('openapi-tool-editor');
    await docShot('tool-form');
    await flowDialog().getByRole('button', { name: 'Close' }).first().click();
    await flowDialog().waitFor({ state: 'hidden' });
  });

  let agentId;
  await step('a preferred Assist pipeline with our agent (websocket API)', async () => {
    const agents = await ourAgents();
    agentId = agents.map((a) => a.entity_id).sort()[0];
    const pipeline = await callWS({
      type: 'assist_pipeline/pipeline/create',
      name: 'HTTP Tools Agent',
      language: 'en',
      conversation_engine: agentId,
      conversation_language: 'en',
      stt_engine: null,
      stt_language: null,
      tts_engine: null,
      tts_language: null,
      tts_voice: null,
      wake_word_entity: null,
      wake_word_id: null,
    });
    await callWS({ type: 'assist_pipeline/pipeline/set_preferred', pipeline_id: pipeline.id });
    console.log(`drive:   pipeline ${pipeline.id} with ${agentId}, preferred`);
  });

  await step(`Assist dialog: ask "${QUESTION}" and see the answer`, async () => {
    await page.goto(`${state.url}/home`);
    // A loaded machine may take a while to draw the dashboard's toolbar.
    await page.getByRole('button', { name: /^Assist\b/ }).click({ timeout: 90_000 });
    const dialog = page.locator('ha-voice-command-dialog');
    const input = dialog.getByRole('textbox').first();
    await input.fill(QUESTION);
    await input.press('Enter');
    const answer = page.getByText(ANSWER);
    await answer.waitFor({ timeout: 60_000 });
    await shot('assist-answer');
    // The answer's details show the tool call and its result.
    await dialog.getByText('Show details').last().click();
    await dialog.getByText(/get_weather/).first().waitFor();
    await page.waitForTimeout(500);
    await answer.scrollIntoViewIfNeeded();
    await shot('assist-answer-details');
    await docShot('assist-answer', async () => {
      await dialog.getByText(/get_weather/).first().scrollIntoViewIfNeeded();
    });
    const dialogText = await dialog.innerText();
    assert.ok(!dialogText.includes('"name"'), 'no call markup reaches the chat');
  });

  await step('the tool server and the LLM saw the turn', async () => {
    const seen = await control();
    const weather = seen.tools.filter((r) => r.method === 'GET' && r.path === '/weather/Rome');
    assert.equal(weather.length, 1, `GET /weather/Rome expected: ${JSON.stringify(seen.tools)}`);
    // The warm-ups (not streamed, max_tokens 1) read the prompt ahead of the turn.
    const warmUps = seen.llm.filter((r) => !r.stream);
    assert.ok(warmUps.length >= 1, 'the agent warmed the server up');
    assert.ok(warmUps.every((r) => r.max_tokens === 1), 'a warm-up writes one token');
    // One chat completion, the call: the small model's agent reads the
    // whole result out itself, with no request for the answer.
    const llm = seen.llm.filter((r) => r.stream);
    assert.equal(llm.length, 1, `one chat completion expected, got ${llm.length}`);
    assert.equal(llm[0].messages.at(-1).role, 'user');
    const offered = (llm[0].tools || []).map((t) => t.function.name);
    assert.deepEqual(offered, ['get_weather', 'list_rooms', 'set_lights', 'GetDateTime']);
    console.log(`drive:   tool server: ${weather.length} request; LLM: ${llm.length} requests, ${warmUps.length} warm-ups`);
    const { issues } = await callWS({ type: 'repairs/list_issues' });
    const ours = issues.filter((i) => i.domain === 'http_tools_agent');
    console.log(`drive:   repairs: ${issues.map((i) => `${i.domain}/${i.issue_id}`).join(', ') || 'none'}`);
    assert.deepEqual(ours, [], 'no repair issue of ours');
  });
} catch {
  exitCode = 1;
} finally {
  if (notFound.size) {
    console.log(`drive: HTTP errors the page met (${notFound.size}):`);
    for (const e of [...notFound].slice(0, 20)) console.log(`drive:   ${e}`);
  }
  const otherErrors = consoleErrors.filter((e) => !e.startsWith('Failed to load resource'));
  if (otherErrors.length) {
    console.log(`drive: browser console errors (${otherErrors.length}):`);
    for (const e of otherErrors.slice(0, 20)) console.log(`drive:   ${e}`);
  }
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
if (docImages.length) {
  console.log(`drive: ${docImages.length} documentation pictures in ${path.relative(process.cwd(), DOC_IMAGES)}`);
}
console.log(`drive: ${exitCode ? 'FAILED' : 'passed'} in ${seconds(Date.now() - started)} s`);
process.exit(exitCode);
